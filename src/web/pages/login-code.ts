// Signing in with a code mailed to the address (CONTRACT §5), its second step when the
// account has a second factor, and setting one up when the workspace asks for it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AuthServiceError } from '../api.ts'
import { captchaTokenOf, captchaWidget, pageCaptcha } from '../captcha.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import {
  codeField,
  emailField,
  errorSummary,
  type FormErrors,
  form,
  hidden,
  notice,
} from '../layout.ts'
import { formErrors } from '../messages.ts'
import { openPending, rememberedDeviceOf, sealPending } from '../session.ts'
import {
  codesAllowed,
  type Pending,
  type Req,
  rememberDeviceBox,
  rememberDeviceTicked,
  signedIn,
  statusOf,
  totpFigure,
} from './flow.ts'
import { secondFactorPage } from './second-factor.ts'
import { connectionForEmail, ssoStartPath } from './sso-sign-in.ts'

async function codeRequestPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { email?: string; errors?: FormErrors; status?: number } = {},
) {
  const t = pages.t(request, reply)
  const body = html`<h1>${t('loginCode.heading')}</h1>
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'sign-in/code'),
  pages.csrf(request, reply),
  html`${emailField(state.email, state.errors, t)}
${captchaWidget(request, 'login_code', t)}`,
  t('common.emailMeCode'),
)}
<p><a href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`
  return pages.send(request, reply, t('loginCode.title'), body, {
    status: state.status,
    captcha: pageCaptcha(request, 'login_code'),
  })
}

async function codeEntryPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  email: string,
  state: { errors?: FormErrors; status?: number } = {},
) {
  const sealed = sealPending(pages.ctx(request), request, reply, { email })
  const t = pages.t(request, reply)
  const body = html`<h1>${t('loginCode.checkHeading')}</h1>
${notice(t('reset.codeSent', { email }))}
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'sign-in/code/verify'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}${codeField('code', t('loginCode.codeLabel'), state.errors)}`,
  t('signIn.submit'),
)}
<p><a href="${pages.url(request, 'sign-in/code')}">${t('common.sendNewCode')}</a></p>`
  return pages.send(request, reply, t('loginCode.enterTitle'), body, { status: state.status })
}

async function enrolPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: Pending,
  secret: string,
  errors?: FormErrors,
) {
  const sealed = sealPending(pages.ctx(request), request, reply, { ...pending, secret })
  const t = pages.t(request, reply)
  const body = html`<h1>${t('enrol.heading')}</h1>
<p>${t('enrol.intro')}</p>
${await totpFigure(request.tenant.name, pending.email, secret, t)}
${errorSummary(errors, t)}
${form(
  pages.url(request, 'sign-in/code/enrol'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}${codeField('totpCode', t('enrol.codeLabel'), errors)}${rememberDeviceBox(request, t, 'remember-enrol')}`,
  t('enrol.submit'),
)}`
  return pages.send(request, reply, t('enrol.title'), body)
}

export function loginCodeRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/sign-in/code', async (request, reply) => {
    if (!codesAllowed(request.tenant)) return pages.redirect(request, reply, 'sign-in')
    return codeRequestPage(pages, request, reply)
  })

  app.post('/sign-in/code', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    // CONTRACT §12: an address of an enforced SSO domain gets no code; it signs in there.
    const enforced = await connectionForEmail(pages, request.tenant.id, email)
    if (enforced?.enforce)
      return pages.continueTo(request, reply, pages.url(request, ssoStartPath(enforced.id)))
    try {
      const captchaToken = captchaTokenOf(request, 'login_code', request.body)
      await pages.api(request).requestLoginCode({ body: { email, captchaToken } })
      return codeEntryPage(pages, request, reply, email)
    } catch (error) {
      return codeRequestPage(pages, request, reply, {
        email,
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })

  app.post('/sign-in/code/verify', async (request: Req, reply) => {
    const pending = openPending<Pending>(pages.ctx(request), request, request.body?.pending)
    if (!pending) return codeRequestPage(pages, request, reply)
    const code = formText(request.body, 'code')
    const api = pages.api(request)
    try {
      // CONTRACT §21: a remembered device skips the second factor.
      const deviceToken = rememberedDeviceOf(pages.ctx(request), request)
      const envelope = await api.verifyLoginCode({
        body: { email: pending.email, code, ...(deviceToken ? { deviceToken } : {}) },
      })
      return signedIn(pages, request, reply, envelope, ['otp'])
    } catch (error) {
      if (error instanceof AuthServiceError && error.reason === 'mfa_required') {
        return secondFactorPage(pages, request, reply, { email: pending.email, loginCode: code }, [
          'totp',
        ])
      }
      if (error instanceof AuthServiceError && error.reason === 'mfa_not_enrolled') {
        try {
          const enrolment = await api.initialEnrollTotp({
            body: { email: pending.email, loginCode: code },
          })
          const pendingCode = { email: pending.email, loginCode: code }
          return enrolPage(pages, request, reply, pendingCode, enrolment.secret)
        } catch (inner) {
          return codeEntryPage(pages, request, reply, pending.email, {
            errors: formErrors(inner, pages.t(request, reply)),
            status: statusOf(inner),
          })
        }
      }
      return codeEntryPage(pages, request, reply, pending.email, {
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })

  app.post('/sign-in/code/second-factor', async (request: Req, reply) => {
    const pending = openPending<Pending>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.loginCode) return codeRequestPage(pages, request, reply)
    const method = formText(request.body, 'method')
    const second =
      method === 'recovery'
        ? { recoveryCode: formText(request.body, 'recoveryCode') }
        : { totpCode: formText(request.body, 'totpCode') }
    try {
      const remember = rememberDeviceTicked(request.body) ? { rememberDevice: true } : {}
      const envelope = await pages.api(request).verifyLoginCode({
        body: { email: pending.email, code: pending.loginCode, ...second, ...remember } as never,
      })
      return signedIn(pages, request, reply, envelope, ['otp', 'mfa'])
    } catch (error) {
      const target = method === 'recovery' ? 'recoveryCode' : 'totpCode'
      return secondFactorPage(pages, request, reply, pending, ['totp'], {
        errors: formErrors(error, pages.t(request, reply), { totpCode: target }),
      })
    }
  })

  app.post('/sign-in/code/enrol', async (request: Req, reply) => {
    type Enrolling = Pending & { secret: string }
    const pending = openPending<Enrolling>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.loginCode || !pending.secret) return codeRequestPage(pages, request, reply)
    try {
      const envelope = await pages.api(request).initialVerifyTotp({
        body: {
          email: pending.email,
          loginCode: pending.loginCode,
          totpCode: formText(request.body, 'totpCode'),
          ...(rememberDeviceTicked(request.body) ? { rememberDevice: true } : {}),
        },
      })
      return signedIn(pages, request, reply, envelope, ['otp', 'mfa'])
    } catch (error) {
      const { secret, ...rest } = pending
      return enrolPage(
        pages,
        request,
        reply,
        rest,
        secret,
        formErrors(error, pages.t(request, reply), { code: 'totpCode' }),
      )
    }
  })
}
