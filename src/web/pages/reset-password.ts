// Resetting a forgotten password with a mailed code (CONTRACT §9): the code and the new
// password, then the second factor when the account has one, the first step carried
// sealed in the form (session.ts); a reset signs the browser in.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AuthServiceError } from '../api.ts'
import { captchaTokenOf, captchaWidget, pageCaptcha } from '../captcha.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import {
  emailField,
  errorSummary,
  type FormErrors,
  field,
  form,
  hidden,
  notice,
} from '../layout.ts'
import { formErrors } from '../messages.ts'
import { openPending, sealPending } from '../session.ts'
import { mailedCodeField, type Req, signedIn, statusOf } from './flow.ts'
import { secondFactorFields, secondFactorOf } from './second-factor.ts'

interface ResetPending {
  email: string
  code?: string
  newPassword?: string
}

async function requestPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { email?: string; errors?: FormErrors; status?: number } = {},
) {
  const t = pages.t(request, reply)
  const body = html`<h1>${t('reset.heading')}</h1>
<p>${t('reset.intro')}</p>
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'reset-password'),
  pages.csrf(request, reply),
  html`${emailField(state.email, state.errors, t)}
${captchaWidget(request, 'password_reset', t)}`,
  t('common.emailMeCode'),
)}
<p><a href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`
  return pages.send(request, reply, t('reset.heading'), body, {
    status: state.status,
    captcha: pageCaptcha(request, 'password_reset'),
  })
}

async function choosePage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: ResetPending,
  state: { errors?: FormErrors; status?: number; askSecond?: boolean } = {},
) {
  const sealed = sealPending(pages.ctx(request), request, reply, pending)
  const t = pages.t(request, reply)
  const body = html`<h1>${t('reset.chooseHeading')}</h1>
${!state.askSecond && notice(t('reset.codeSent', { email: pending.email }))}
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'reset-password/confirm'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}
${
  state.askSecond
    ? secondFactorFields(t, state.errors)
    : html`${mailedCodeField(t, state.errors)}
${field({ name: 'newPassword', label: t('reset.newPassword'), type: 'password', autocomplete: 'new-password', hint: t('reset.newPasswordHint'), errors: state.errors })}`
}`,
  state.askSecond ? t('common.continue') : t('reset.submit'),
)}
<p><a href="${pages.url(request, 'reset-password')}">${t('common.sendNewCode')}</a></p>`
  return pages.send(request, reply, t('reset.chooseHeading'), body, { status: state.status })
}

export function resetPasswordRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/reset-password', async (request, reply) => {
    if (request.tenant.authPolicy === 'PasswordlessOnly')
      return pages.redirect(request, reply, 'sign-in')
    return requestPage(pages, request, reply)
  })

  app.post('/reset-password', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    try {
      const captchaToken = captchaTokenOf(request, 'password_reset', request.body)
      await pages.api(request).requestPasswordReset({ body: { email, captchaToken } })
      return choosePage(pages, request, reply, { email })
    } catch (error) {
      return requestPage(pages, request, reply, {
        email,
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })

  app.post('/reset-password/confirm', async (request: Req, reply) => {
    const pending = openPending<ResetPending>(pages.ctx(request), request, request.body?.pending)
    if (!pending) return requestPage(pages, request, reply)
    // The first step brings the code and the password; a second one the second factor.
    const step: ResetPending = pending.code
      ? pending
      : {
          email: pending.email,
          code: formText(request.body, 'code'),
          newPassword: formText(request.body, 'newPassword'),
        }
    const second = pending.code ? secondFactorOf(request.body) : {}
    try {
      const envelope = await pages.api(request).resetPassword({
        body: {
          email: step.email,
          code: step.code ?? '',
          newPassword: step.newPassword ?? '',
          ...second,
        },
      })
      // RFC 8176: the mailed code proved the mailbox (`otp`); the new password proves
      // nothing, the user has just chosen it, so no `pwd`. A second factor when one was
      // asked (an authenticator or a recovery code) makes it `mfa`.
      const amr = pending.code ? ['otp', 'mfa'] : ['otp']
      return signedIn(pages, request, reply, envelope, amr, 'account?done=reset')
    } catch (error) {
      if (error instanceof AuthServiceError && error.reason === 'mfa_required') {
        return choosePage(pages, request, reply, step, {
          askSecond: true,
          errors: pending.code ? formErrors(error, pages.t(request, reply)) : undefined,
        })
      }
      const errors = formErrors(error, pages.t(request, reply), { password: 'newPassword' })
      if (error instanceof AuthServiceError && error.reason === 'invalid_mfa_code') {
        return choosePage(pages, request, reply, step, { askSecond: true, errors, status: 401 })
      }
      return choosePage(
        pages,
        request,
        reply,
        { email: step.email },
        { errors, status: statusOf(error) },
      )
    }
  })
}
