// Verifying an email address with a mailed code (CONTRACT §9), then the second factor when
// the account has one; the address is verified and the browser signed in.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isEmail } from '../../lib/email.ts'
import { AuthServiceError } from '../api.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import { errorSummary, type FormErrors, form, hidden, notice } from '../layout.ts'
import { formErrors } from '../messages.ts'
import { openPending, sealPending } from '../session.ts'
import { mailedCodeField, type Req, signedIn, statusOf } from './flow.ts'
import { secondFactorFields, secondFactorOf } from './second-factor.ts'

async function verifyPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: { email: string; code?: string },
  state: { errors?: FormErrors; status?: number; note?: string; askSecond?: boolean } = {},
) {
  const sealed = sealPending(pages.ctx(request), request, reply, pending)
  const csrf = pages.csrf(request, reply)
  const t = pages.t(request, reply)
  const body = html`<h1>${t('verify.heading')}</h1>
${notice(state.note ?? (state.askSecond ? undefined : t('verify.codeSent', { email: pending.email })))}
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'verify-email'),
  csrf,
  html`${hidden('pending', sealed)}${state.askSecond ? secondFactorFields(t, state.errors) : mailedCodeField(t, state.errors)}`,
  state.askSecond ? t('common.continue') : t('verify.submit'),
)}
${
  !state.askSecond &&
  form(
    pages.url(request, 'verify-email/resend'),
    csrf,
    hidden('pending', sealed),
    t('common.sendNewCode'),
  )
}`
  return pages.send(request, reply, t('verify.title'), body, { status: state.status })
}

export function verifyEmailRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/verify-email', async (request: Req, reply) => {
    const email = typeof request.query.email === 'string' ? request.query.email.trim() : ''
    // Only an address is named on the page (it says a code was sent there).
    if (!isEmail(email)) return pages.redirect(request, reply, 'sign-in')
    return verifyPage(pages, request, reply, { email })
  })

  app.post('/verify-email/resend', async (request: Req, reply) => {
    const pending = openPending<{ email: string }>(
      pages.ctx(request),
      request,
      request.body?.pending,
    )
    if (!pending) return pages.redirect(request, reply, 'sign-in')
    try {
      await pages.api(request).requestEmailVerification({ body: { email: pending.email } })
      return verifyPage(
        pages,
        request,
        reply,
        { email: pending.email },
        { note: pages.t(request, reply)('verify.newCodeSent', { email: pending.email }) },
      )
    } catch (error) {
      return verifyPage(
        pages,
        request,
        reply,
        { email: pending.email },
        { errors: formErrors(error, pages.t(request, reply)), status: statusOf(error) },
      )
    }
  })

  app.post('/verify-email', async (request: Req, reply) => {
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
      const amr = pending.code ? ['otp', 'mfa'] : ['otp']
      return signedIn(pages, request, reply, envelope, amr, 'account?done=verified')
    } catch (error) {
      if (
        error instanceof AuthServiceError &&
        (error.reason === 'mfa_required' || error.reason === 'invalid_mfa_code')
      ) {
        const errors =
          error.reason === 'invalid_mfa_code' || pending.code
            ? formErrors(error, pages.t(request, reply))
            : undefined
        return verifyPage(pages, request, reply, step, { askSecond: true, errors })
      }
      return verifyPage(
        pages,
        request,
        reply,
        { email: step.email },
        { errors: formErrors(error, pages.t(request, reply)), status: statusOf(error) },
      )
    }
  })
}
