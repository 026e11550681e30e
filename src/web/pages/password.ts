// Signing in with an email address and a password. A password that is right may still need
// a second factor (second-factor.ts) or a verified address (the verification page).
import type { FastifyInstance } from 'fastify'
import { AuthServiceError } from '../api.ts'
import { captchaTokenOf } from '../captcha.ts'
import type { Pages } from '../context.ts'
import { formText } from '../http.ts'
import { openIdpWords } from '../idp.ts'
import { formErrors } from '../messages.ts'
import { rememberedDeviceOf } from '../session.ts'
import { type Req, signedIn, statusOf } from './flow.ts'
import { idpRefusal } from './idp-sign-in.ts'
import { secondFactorPage } from './second-factor.ts'
import { signInPage } from './sign-in-page.ts'
import { connectionForEmail, ssoStartPath } from './sso-sign-in.ts'

export function passwordSignInRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/', async (request, reply) => {
    const session = await pages.session(request, reply)
    return pages.redirect(request, reply, session ? 'account' : 'sign-in')
  })

  app.get('/sign-in', async (request: Req, reply) => {
    const idp = request.query.idp
    if (typeof idp !== 'string') return signInPage(pages, request, reply)
    // Back from the identity provider with a refusal (web/idp.ts).
    const words =
      idp === 'hook_denied'
        ? openIdpWords(pages.deps, request.tenant.id, request.query.words)
        : undefined
    const errors = { form: words ?? idpRefusal(idp, pages.t(request, reply)) }
    return signInPage(pages, request, reply, { errors, status: 401 })
  })

  app.post('/sign-in', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    const password = formText(request.body, 'password')
    try {
      const captchaToken = captchaTokenOf(request, 'sign_in', request.body)
      // CONTRACT §21: a remembered device skips the second factor.
      const deviceToken = rememberedDeviceOf(pages.ctx(request), request)
      const envelope = await pages.api(request).login({
        body: { email, password, captchaToken, ...(deviceToken ? { deviceToken } : {}) },
      })
      return signedIn(pages, request, reply, envelope, ['pwd'], 'account', { password })
    } catch (error) {
      if (error instanceof AuthServiceError && error.reason === 'mfa_required') {
        const methods = (error.details?.methods as string[] | undefined) ?? ['totp']
        return secondFactorPage(pages, request, reply, { email, password }, methods)
      }
      // CONTRACT §12: an address of an enforced SSO domain goes to its connection (an
      // Admin's right password signed in above).
      const enforced = await connectionForEmail(pages, request.tenant.id, email)
      if (enforced?.enforce)
        return pages.continueTo(request, reply, pages.url(request, ssoStartPath(enforced.id)))
      if (error instanceof AuthServiceError && error.reason === 'email_not_verified') {
        // The password was right: mail a code and go on to the verification page.
        await pages
          .api(request)
          .requestEmailVerification({ body: { email } })
          .catch(() => undefined)
        return pages.redirect(request, reply, `verify-email?email=${encodeURIComponent(email)}`)
      }
      return signInPage(pages, request, reply, {
        email,
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })
}
