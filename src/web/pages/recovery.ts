// Getting back in: resetting a forgotten password and verifying an email address with a
// mailed code (CONTRACT §9), as forms. A step waiting for a second factor carries what was
// typed before it sealed in the form (session.ts), like a sign-in does.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isEmail } from '../../lib/email.ts'
import { AuthServiceError } from '../api.ts'
import type { Pages } from '../context.ts'
import { type Html, html } from '../html.ts'
import { type Form, formText } from '../http.ts'
import {
  codeField,
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
import { expiredForm, statusOf } from './signin.ts'

type Req = FastifyRequest<{ Body: Form; Querystring: Record<string, string> }>

interface ResetPending {
  email: string
  code?: string
  newPassword?: string
}

const mailedCodeField = (errors?: FormErrors) =>
  codeField('code', '6-digit code from the email', errors)

/** The second-factor fields of a reset or a verification: the app's code, or a recovery code. */
const secondFactorFields = (errors?: FormErrors): Html => html`
<p>Your account has an authenticator app: give a code from it, or one of your recovery codes.</p>
${field({ name: 'totpCode', label: 'Code from your authenticator app', inputmode: 'numeric', autocomplete: 'one-time-code', required: false, errors })}
${field({ name: 'recoveryCode', label: 'Or a recovery code', autocomplete: 'off', required: false, errors })}`

const secondFactorOf = (body: Form | undefined) => {
  const recoveryCode = formText(body, 'recoveryCode').trim()
  const totpCode = formText(body, 'totpCode').trim()
  if (recoveryCode && !totpCode) return { recoveryCode }
  return totpCode ? { totpCode } : {}
}

export function recoveryRoutes(app: FastifyInstance, pages: Pages): void {
  // --- Password reset --------------------------------------------------------------------

  const requestPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    state: { email?: string; errors?: FormErrors; status?: number } = {},
  ) => {
    const body = html`<h1>Reset your password</h1>
<p>We will email you a code to choose a new password.</p>
${errorSummary(state.errors)}
${form(
  pages.url(request, 'reset-password'),
  pages.csrf(request, reply),
  emailField(state.email, state.errors),
  'Email me a code',
)}
<p><a href="${pages.url(request, 'sign-in')}">Back to sign in</a></p>`
    return pages.send(request, reply, 'Reset your password', body, { status: state.status })
  }

  const choosePage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    pending: ResetPending,
    state: { errors?: FormErrors; status?: number; askSecond?: boolean } = {},
  ) => {
    const sealed = sealPending(pages.ctx(request), request, reply, pending)
    const body = html`<h1>Choose a new password</h1>
${!state.askSecond && notice(`If ${pending.email} has an account here, we sent it a 6-digit code. It works for 10 minutes.`)}
${errorSummary(state.errors)}
${form(
  pages.url(request, 'reset-password/confirm'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}
${
  state.askSecond
    ? secondFactorFields(state.errors)
    : html`${mailedCodeField(state.errors)}
${field({ name: 'newPassword', label: 'New password', type: 'password', autocomplete: 'new-password', hint: 'At least 12 characters. You will be signed out everywhere else.', errors: state.errors })}`
}`,
  state.askSecond ? 'Continue' : 'Set the new password',
)}
<p><a href="${pages.url(request, 'reset-password')}">Send a new code</a></p>`
    return pages.send(request, reply, 'Choose a new password', body, { status: state.status })
  }

  app.get('/reset-password', async (request, reply) => {
    if (request.tenant.authPolicy === 'PasswordlessOnly')
      return pages.redirect(request, reply, 'sign-in')
    return requestPage(request, reply)
  })

  app.post('/reset-password', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const email = formText(request.body, 'email')
    try {
      await pages.api(request).requestPasswordReset({ body: { email } })
      return choosePage(request, reply, { email })
    } catch (error) {
      return requestPage(request, reply, {
        email,
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  app.post('/reset-password/confirm', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const pending = openPending<ResetPending>(pages.ctx(request), request, request.body?.pending)
    if (!pending) return requestPage(request, reply)
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
      pages.startSession(request, reply, envelope, pending.code ? ['otp', 'mfa'] : ['otp'])
      return pages.signedIn(request, reply, 'account?done=reset')
    } catch (error) {
      if (error instanceof AuthServiceError && error.reason === 'mfa_required') {
        return choosePage(request, reply, step, {
          askSecond: true,
          errors: pending.code ? formErrors(error) : undefined,
        })
      }
      const errors = formErrors(error, { password: 'newPassword' })
      if (error instanceof AuthServiceError && error.reason === 'invalid_mfa_code') {
        return choosePage(request, reply, step, { askSecond: true, errors, status: 401 })
      }
      return choosePage(request, reply, { email: step.email }, { errors, status: statusOf(error) })
    }
  })

  // --- Email verification -----------------------------------------------------------------

  const verifyPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    pending: { email: string; code?: string },
    state: { errors?: FormErrors; status?: number; note?: string; askSecond?: boolean } = {},
  ) => {
    const sealed = sealPending(pages.ctx(request), request, reply, pending)
    const csrf = pages.csrf(request, reply)
    const body = html`<h1>Verify your email address</h1>
${notice(state.note ?? (state.askSecond ? undefined : `We sent a 6-digit code to ${pending.email}. It works for 10 minutes.`))}
${errorSummary(state.errors)}
${form(
  pages.url(request, 'verify-email'),
  csrf,
  html`${hidden('pending', sealed)}${state.askSecond ? secondFactorFields(state.errors) : mailedCodeField(state.errors)}`,
  state.askSecond ? 'Continue' : 'Verify',
)}
${
  !state.askSecond &&
  form(
    pages.url(request, 'verify-email/resend'),
    csrf,
    hidden('pending', sealed),
    'Send a new code',
  )
}`
    return pages.send(request, reply, 'Verify your email', body, { status: state.status })
  }

  app.get('/verify-email', async (request: Req, reply) => {
    const email = typeof request.query.email === 'string' ? request.query.email.trim() : ''
    // Only an address is named on the page (it says a code was sent there).
    if (!isEmail(email)) return pages.redirect(request, reply, 'sign-in')
    return verifyPage(request, reply, { email })
  })

  app.post('/verify-email/resend', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const pending = openPending<{ email: string }>(
      pages.ctx(request),
      request,
      request.body?.pending,
    )
    if (!pending) return pages.redirect(request, reply, 'sign-in')
    try {
      await pages.api(request).requestEmailVerification({ body: { email: pending.email } })
      return verifyPage(
        request,
        reply,
        { email: pending.email },
        { note: `We sent a new code to ${pending.email}.` },
      )
    } catch (error) {
      return verifyPage(
        request,
        reply,
        { email: pending.email },
        { errors: formErrors(error), status: statusOf(error) },
      )
    }
  })

  app.post('/verify-email', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const pending = openPending<{ email: string; code?: string }>(
      pages.ctx(request),
      request,
      request.body?.pending,
    )
    if (!pending) return pages.redirect(request, reply, 'sign-in')
    const step = pending.code
      ? pending
      : { email: pending.email, code: formText(request.body, 'code') }
    const second = pending.code ? secondFactorOf(request.body) : {}
    try {
      const envelope = await pages.api(request).verifyEmail({
        body: { email: step.email, code: step.code ?? '', ...second },
      })
      pages.startSession(request, reply, envelope as never, pending.code ? ['otp', 'mfa'] : ['otp'])
      return pages.signedIn(request, reply, 'account?done=verified')
    } catch (error) {
      if (
        error instanceof AuthServiceError &&
        (error.reason === 'mfa_required' || error.reason === 'invalid_mfa_code')
      ) {
        const errors =
          error.reason === 'invalid_mfa_code' || pending.code ? formErrors(error) : undefined
        return verifyPage(request, reply, step, { askSecond: true, errors })
      }
      return verifyPage(
        request,
        reply,
        { email: step.email },
        { errors: formErrors(error), status: statusOf(error) },
      )
    }
  })
}
