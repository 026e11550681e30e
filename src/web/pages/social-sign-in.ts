// Social sign-in on the hosted pages (CONTRACT §19): the sign-in page shows one button per
// enabled connection of the tenant, in the connections' `order`, each a link to
// `/t/{slug}/social/{id}`. That page notes the authorization request (§11) the sign-in serves
// (read from the pages' cookies) and sends the browser to the provider; the callback
// (modules/federation/social/routes.ts) ends it. A button's mark is drawn here (a letter in
// the provider's colour): no request leaves for a third party before the click.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { enabledConnection, startFlow } from '../../modules/federation/social/routes.ts'
import { enabledSocialConnections } from '../../modules/federation/social/service.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { pendingFlow } from './sso-sign-in.ts'

/** `social/{id}`: the page that starts a sign-in through connection `id`. */
export const socialStartPath = (id: string) => `social/${id}`

/** The buttons of the tenant's enabled connections, in order; nothing when it has none. */
export async function socialButtons(pages: Pages, request: FastifyRequest) {
  const t = pages.t(request)
  const connections = await enabledSocialConnections(pages.deps, request.tenant.id)
  if (connections.length === 0) return ''
  return html`<ul class="social-buttons">
${connections.map(
  (c) =>
    html`<li><a class="button social" data-provider="${c.provider}" href="${pages.url(request, socialStartPath(c.id))}"><span class="mark" aria-hidden="true">${c.name.slice(0, 1).toUpperCase()}</span>${t('signIn.social', { name: c.name })}</a></li>`,
)}
</ul>`
}

export function socialSignInRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/social/:id', async (request, reply) => {
    const { tenant } = request
    const { id } = request.params as { id: string }
    const connection = await enabledConnection(pages.deps, tenant.id, id)
    if (!connection) {
      const t = pages.t(request, reply)
      const body = html`<h1>${t('social.refusalHeading')}</h1>
<div class="error-summary" role="alert"><p>${t('social.refusal.not_found')}</p></div>
<p><a class="button" href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`
      return pages.send(request, reply, t('oidcError.title'), body, { status: 404 })
    }
    return startFlow(pages.deps, request, reply, connection, pendingFlow(pages, request, tenant))
  })
}
