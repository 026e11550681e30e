// The second step of a sign-in (CONTRACT §5): the page both first factors answer with when
// the account has a second one, the step after a password, and the second-factor fields a
// reset or a verification asks for. The first factor travels sealed in the form
// (session.ts, `sealPending`), never in a cookie or on the server; the step after an
// emailed code is that flow's own (login-code.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Translate } from '../../i18n/index.ts'
import { AuthServiceError } from '../api.ts'
import { captchaTokenOf, captchaWidget, pageCaptcha } from '../captcha.ts'
import type { Pages } from '../context.ts'
import { type Html, html, raw } from '../html.ts'
import { type Form, formText } from '../http.ts'
import { codeField, errorSummary, type FormErrors, field, form, hidden, notice } from '../layout.ts'
import { formErrors } from '../messages.ts'
import { openPending, sealPending } from '../session.ts'
import {
  type Pending,
  type Req,
  rememberDeviceBox,
  rememberDeviceTicked,
  signedIn,
} from './flow.ts'
import { signInPage } from './sign-in-page.ts'

export async function secondFactorPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: Pending,
  methods: string[],
  state: { errors?: FormErrors; note?: string; emailSent?: boolean } = {},
) {
  const csrf = pages.csrf(request, reply)
  const t = pages.t(request, reply)
  const sealed = sealPending(pages.ctx(request), request, reply, { ...pending, methods })
  const totp = methods.includes('totp')
  const email = methods.includes('email')
  const action = pages.url(
    request,
    pending.loginCode ? 'sign-in/code/second-factor' : 'sign-in/second-factor',
  )
  // The password's second step is another login call, with its own CAPTCHA answer
  // (CONTRACT §21); the emailed code's step is not a login call.
  const captcha = pending.loginCode ? undefined : pageCaptcha(request, 'sign_in')
  const widget = captcha ? captchaWidget(request, 'sign_in', t) : ''
  const body = html`<h1>${t('secondFactor.heading')}</h1>
${notice(state.note)}
${errorSummary(state.errors, t)}
${
  totp &&
  form(
    action,
    csrf,
    html`${hidden('pending', sealed)}${hidden('method', 'totp')}
${codeField('totpCode', t('secondFactor.totpLabel'), state.errors)}${widget}
${rememberDeviceBox(request, t, 'remember-totp')}`,
    t('common.continue'),
  )
}
${
  totp &&
  html`<details${state.errors?.fields?.recoveryCode ? raw(' open') : ''}><summary>${t('secondFactor.useRecovery')}</summary>
${form(action, csrf, html`${hidden('pending', sealed)}${hidden('method', 'recovery')}${field({ name: 'recoveryCode', label: t('secondFactor.recoveryLabel'), autocomplete: 'off', errors: state.errors })}${widget}${rememberDeviceBox(request, t, 'remember-recovery')}`, t('secondFactor.recoverySubmit'))}
</details>`
}
${
  email &&
  (state.emailSent
    ? form(
        action,
        csrf,
        html`${hidden('pending', sealed)}${hidden('method', 'email')}
${codeField('emailOtpCode', t('secondFactor.emailLabel'), state.errors)}${widget}
${rememberDeviceBox(request, t, 'remember-email')}`,
        t('common.continue'),
      )
    : form(
        action,
        csrf,
        html`${hidden('pending', sealed)}${hidden('method', 'send-email')}`,
        t('common.emailMeCode'),
      ))
}
<p><a href="${pages.url(request, 'sign-in')}">${t('secondFactor.startAgain')}</a></p>`
  return pages.send(request, reply, t('secondFactor.title'), body, { captcha })
}

/** The second-factor fields of a reset or a verification: the app's code, or a recovery code. */
export const secondFactorFields = (t: Translate, errors?: FormErrors): Html => html`
<p>${t('secondFactor.fieldsIntro')}</p>
${field({ name: 'totpCode', label: t('secondFactor.totpLabel'), inputmode: 'numeric', autocomplete: 'one-time-code', required: false, errors })}
${field({ name: 'recoveryCode', label: t('secondFactor.orRecoveryLabel'), autocomplete: 'off', required: false, errors })}`

/** The second factor a reset or a verification form gave: the app's code, else a recovery code. */
export const secondFactorOf = (body: Form | undefined) => {
  const recoveryCode = formText(body, 'recoveryCode').trim()
  const totpCode = formText(body, 'totpCode').trim()
  if (recoveryCode && !totpCode) return { recoveryCode }
  return totpCode ? { totpCode } : {}
}

export function secondFactorRoutes(app: FastifyInstance, pages: Pages): void {
  app.post('/sign-in/second-factor', async (request: Req, reply) => {
    const pending = openPending<Pending>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.password) {
      return signInPage(pages, request, reply, {
        note: pages.t(request, reply)('signIn.tooLong'),
      })
    }
    const method = formText(request.body, 'method')
    const api = pages.api(request)
    const base = { email: pending.email, password: pending.password }
    const methods = pending.methods ?? ['totp', 'email']
    try {
      if (method === 'send-email') {
        await api.requestEmailOtp({ body: base })
        return secondFactorPage(pages, request, reply, pending, methods, {
          emailSent: true,
          note: pages.t(request, reply)('secondFactor.emailSent'),
        })
      }
      const second =
        method === 'recovery'
          ? { recoveryCode: formText(request.body, 'recoveryCode') }
          : method === 'email'
            ? { emailOtpCode: formText(request.body, 'emailOtpCode') }
            : { totpCode: formText(request.body, 'totpCode') }
      const captchaToken = captchaTokenOf(request, 'sign_in', request.body)
      const remember = rememberDeviceTicked(request.body) ? { rememberDevice: true } : {}
      const envelope = await api.login({
        body: { ...base, ...second, captchaToken, ...remember } as never,
      })
      // A recovery code is no one-time password of a device (RFC 8176 has no value for a
      // look-up secret): the second factor is reported by `mfa` alone.
      const amr = method === 'recovery' ? ['pwd', 'mfa'] : ['pwd', 'otp', 'mfa']
      return signedIn(pages, request, reply, envelope, amr, 'account', {
        password: pending.password,
      })
    } catch (error) {
      const target =
        method === 'recovery' ? 'recoveryCode' : method === 'email' ? 'emailOtpCode' : 'totpCode'
      const errors = formErrors(error, pages.t(request, reply), { totpCode: target, code: target })
      if (error instanceof AuthServiceError && error.reason === 'invalid_credentials') {
        return signInPage(pages, request, reply, { email: pending.email, errors, status: 401 })
      }
      return secondFactorPage(pages, request, reply, pending, methods, {
        errors,
        emailSent: method === 'email',
      })
    }
  })
}
