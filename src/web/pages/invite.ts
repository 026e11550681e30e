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
  const t = pages.t(request, reply)
  const body = html`<h1>${t('invite.heading', { tenant: request.tenant.name })}</h1>
<p>${t('invite.intro')}</p>
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'invite'),
  pages.csrf(request, reply),
  html`${hidden('token', token)}
${field({ name: 'password', label: t('invite.password'), type: 'password', autocomplete: 'new-password', hint: t('password.hint'), errors: state.errors })}`,
  t('invite.submit'),
)}`
  return pages.send(request, reply, t('invite.title'), body, { status: state.status })
}

/** An invitation link without its token (cut off by a mail client): 400, say so. */
export function incompleteLink(pages: Pages, request: FastifyRequest, reply: FastifyReply) {
  const t = pages.t(request, reply)
  return pages.send(
    request,
    reply,
    t('invite.incompleteTitle'),
    html`<h1>${t('invite.incompleteHeading')}</h1><p>${t('invite.incompleteText')}</p>`,
    { status: 400 },
  )
}

export function invitationRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/invite', async (request: Req, reply) => {
    const token = typeof request.query.token === 'string' ? request.query.token : ''
    if (!token) return incompleteLink(pages, request, reply)
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
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })
}
