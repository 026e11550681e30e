// Creating an account with an email address and a password: signed in at once, or on to
// the verification page when the workspace asks for verified addresses.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
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
  const body = html`<h1>Create your account</h1>
${errorSummary(state.errors)}
${form(
  pages.url(request, 'sign-up'),
  pages.csrf(request, reply),
  html`${emailField(state.email, state.errors)}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: 'At least 12 characters. A few unrelated words make a strong password.', errors: state.errors })}`,
  'Create account',
)}
<p>Already have an account? <a href="${pages.url(request, 'sign-in')}">Sign in</a></p>`
  return pages.send(request, reply, 'Sign up', body, { status: state.status })
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
        body: { email, password: formText(request.body, 'password') },
      })) as TokenEnvelope | { verificationRequired: true }
      if ('verificationRequired' in answer) {
        return pages.redirect(request, reply, `verify-email?email=${encodeURIComponent(email)}`)
      }
      return signedIn(pages, request, reply, answer, ['pwd'])
    } catch (error) {
      return signUpPage(pages, request, reply, {
        email,
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })
}
