// Creating an account with an email address and a password: signed in at once, or on to
// the verification page when the workspace asks for verified addresses.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { captchaTokenOf, captchaWidget, pageCaptcha } from '../captcha.ts'
import type { Pages, TokenEnvelope } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import { emailField, errorSummary, type FormErrors, field, form } from '../layout.ts'
import { formErrors } from '../messages.ts'
import { passwordsAllowed, type Req, signedIn, statusOf } from './flow.ts'

async function signUpPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { email?: string; errors?: FormErrors; status?: number } = {},
) {
  const t = pages.t(request, reply)
  const body = html`<h1>${t('signUp.heading')}</h1>
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'sign-up'),
  pages.csrf(request, reply),
  html`${emailField(state.email, state.errors, t)}
${field({ name: 'password', label: t('signUp.password'), type: 'password', autocomplete: 'new-password', hint: t('password.hint'), errors: state.errors })}
${captchaWidget(request, 'sign_up', t)}`,
  t('signUp.submit'),
)}
<p>${t('signUp.haveAccount')} <a href="${pages.url(request, 'sign-in')}">${t('signUp.signIn')}</a></p>`
  return pages.send(request, reply, t('signUp.title'), body, {
    status: state.status,
    captcha: pageCaptcha(request, 'sign_up'),
  })
}

export function signUpRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/sign-up', async (request, reply) => {
    if (!passwordsAllowed(request.tenant)) return pages.redirect(request, reply, 'sign-in')
    return signUpPage(pages, request, reply)
  })

  app.post('/sign-up', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    try {
      const answer = (await pages.api(request).signup({
        body: {
          email,
          password: formText(request.body, 'password'),
          captchaToken: captchaTokenOf(request, 'sign_up', request.body),
        },
      })) as TokenEnvelope | { verificationRequired: true }
      if ('verificationRequired' in answer) {
        return pages.redirect(request, reply, `verify-email?email=${encodeURIComponent(email)}`)
      }
      return signedIn(pages, request, reply, answer, ['pwd'])
    } catch (error) {
      return signUpPage(pages, request, reply, {
        email,
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })
}
