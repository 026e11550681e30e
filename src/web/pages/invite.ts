// Accepting an invitation: the link's token and a password chosen here make the account.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import { errorSummary, type FormErrors, field, form, hidden } from '../layout.ts'
import { formErrors } from '../messages.ts'
import { type Req, signedIn, statusOf } from './flow.ts'

async function invitePage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  state: { errors?: FormErrors; status?: number } = {},
) {
  const body = html`<h1>Join ${request.tenant.name}</h1>
<p>You were invited to this workspace. Choose a password to accept.</p>
${errorSummary(state.errors)}
${form(
  pages.url(request, 'invite'),
  pages.csrf(request, reply),
  html`${hidden('token', token)}
${field({ name: 'password', label: 'Choose a password', type: 'password', autocomplete: 'new-password', hint: 'At least 12 characters. A few unrelated words make a strong password.', errors: state.errors })}`,
  'Accept invitation',
)}`
  return pages.send(request, reply, 'Accept invitation', body, { status: state.status })
}

export function invitationRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/invite', async (request: Req, reply) => {
    const token = typeof request.query.token === 'string' ? request.query.token : ''
    if (!token) {
      return pages.send(
        request,
        reply,
        'Invitation',
        html`<h1>Invitation link incomplete</h1><p>Open the link from your invitation email again, or ask for a new invitation.</p>`,
        { status: 400 },
      )
    }
    return invitePage(pages, request, reply, token)
  })

  app.post('/invite', async (request: Req, reply) => {
    const token = formText(request.body, 'token')
    try {
      const envelope = await pages.api(request).acceptInvite({
        body: { token, password: formText(request.body, 'password') },
      })
      return signedIn(pages, request, reply, envelope, ['pwd'])
    } catch (error) {
      return invitePage(pages, request, reply, token, {
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })
}
