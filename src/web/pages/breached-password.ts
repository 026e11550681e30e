// CONTRACT §21, the breached-password mark: a password sign-in with a password found in a
// breach corpus succeeds and marks the user (/me `passwordBreached`); the pages then ask for
// a new password before going on. flow.ts `signedIn`, given the password the sign-in used,
// reads /me once and, for a marked user, answers this page instead of going on: the
// session has begun; the password just given travels sealed in the form (session.ts,
// `sealPending`, five minutes), so only the new one is asked; PATCH me/password (the API's
// rules: not weak, not breached) clears the mark, and the browser goes where the sign-in
// was going (the OpenID interaction it serves, else the account page).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AuthServiceError } from '../api.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { type Form, formText } from '../http.ts'
import { errorSummary, type FormErrors, field, form, hidden } from '../layout.ts'
import { formErrors } from '../messages.ts'
import { openPending, sealPending } from '../session.ts'

// flow.ts imports this file: its Req and statusOf are spelt here again, without the cycle.
type Req = FastifyRequest<{ Body: Form }>
const statusOf = (error: unknown) => (error instanceof AuthServiceError ? error.status : 500)

interface Breached {
  password: string
  /** Where the sign-in was going: a path of this tenant's pages. */
  next: string
  until?: number
}

export function newPasswordPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: Breached,
  state: { errors?: FormErrors; status?: number } = {},
): Promise<FastifyReply> {
  const t = pages.t(request, reply)
  const sealed = sealPending(pages.ctx(request), request, reply, pending)
  const body = html`<h1>${t('breached.heading')}</h1>
<p>${t('breached.intro')}</p>
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'sign-in/new-password'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}
${field({ name: 'newPassword', label: t('reset.newPassword'), type: 'password', autocomplete: 'new-password', hint: t('breached.hint'), errors: state.errors })}`,
  t('breached.submit'),
)}`
  return pages.send(request, reply, t('breached.title'), body, { status: state.status })
}

export function newPasswordRoutes(app: FastifyInstance, pages: Pages): void {
  app.post('/sign-in/new-password', async (request: Req, reply) => {
    const session = await pages.session(request, reply)
    if (!session) return pages.redirect(request, reply, 'sign-in')
    const pending = openPending<Breached>(pages.ctx(request), request, request.body?.pending)
    // Too late (or not this browser's form): the account page changes it too.
    if (!pending?.password) return pages.redirect(request, reply, 'account')
    try {
      await pages.api(request, session.accessToken).changePassword({
        body: {
          currentPassword: pending.password,
          newPassword: formText(request.body, 'newPassword'),
        },
      })
    } catch (error) {
      const errors = formErrors(error, pages.t(request, reply), { password: 'newPassword' })
      return newPasswordPage(pages, request, reply, pending, { errors, status: statusOf(error) })
    }
    const home = pages.url(request, '')
    const next = pending.next.startsWith(home) ? pending.next : pages.url(request, 'account')
    return pages.continueTo(request, reply, next)
  })
}
