// "Connected apps" on the account page (CONTRACT §11, Consent): the applications the user
// has granted access to (GET me/applications), what each may do in the consent page's words,
// and a Revoke form per application (DELETE me/applications/{clientId}) that comes back to
// the account page with a notice.

import type { FastifyInstance, FastifyRequest } from 'fastify'
import { localDate } from '../../i18n/format.ts'
import { firstApiResources } from '../../modules/apiresources/service.ts'
import type { Pages } from '../context.ts'
import { csrfChecked } from '../csrf.ts'
import { type Html, html } from '../html.ts'
import { SCOPE_WORDS } from './authorize.ts'

export interface ConnectedApp {
  clientId: string
  name: string
  scopes: string[]
  grantedAt: string
}

/**
 * Each scope in words: the OpenID scopes as the consent page says them, a resource scope by
 * its description (else its name) and its API's name.
 */
async function scopeWords(pages: Pages, request: FastifyRequest, apps: ConnectedApp[]) {
  const t = pages.t(request)
  const words = new Map(Object.entries(SCOPE_WORDS).map(([scope, key]) => [scope, t(key)]))
  if (apps.some((a) => a.scopes.some((s) => !words.has(s)))) {
    const resources = await firstApiResources(pages.deps, request.tenant.id, 200)
    for (const resource of resources) {
      for (const scope of resource.scopes) {
        if (!words.has(scope.name)) {
          words.set(scope.name, `${scope.description || scope.name} (${resource.name})`)
        }
      }
    }
  }
  return (scope: string) => words.get(scope) ?? scope
}

/** The section of the account page. */
export async function connectedAppsSection(
  pages: Pages,
  request: FastifyRequest,
  apps: ConnectedApp[],
  csrf: string,
): Promise<Html> {
  const say = await scopeWords(pages, request, apps)
  const t = pages.t(request)
  const action = (app: ConnectedApp) =>
    pages.url(request, `account/applications/${encodeURIComponent(app.clientId)}/revoke`)
  return html`<section aria-labelledby="apps-h">
<h2 id="apps-h">${t('apps.heading')}</h2>
${
  apps.length === 0
    ? html`<p>${t('apps.none')}</p>`
    : html`<p>${t('apps.intro')}</p>
<ul class="items apps">${apps.map(
        (
          app,
        ) => html`<li><span><strong>${app.name}</strong><br><span class="hint">${t('apps.connected', { date: localDate(pages.locale(request), app.grantedAt) })}</span>
<ul class="app-scopes">${app.scopes.map((scope) => html`<li>${say(scope)}</li>`)}</ul></span>
<form method="post" action="${action(app)}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="danger" aria-label="${t('apps.revokeLabel', { name: app.name })}">${t('apps.revoke')}</button></form></li>`,
      )}</ul>`
}
</section>`
}

export function connectedAppRoutes(app: FastifyInstance, pages: Pages): void {
  csrfChecked(app, pages, (scope) => revokeRoute(scope, pages))
}

function revokeRoute(app: FastifyInstance, pages: Pages): void {
  app.post<{ Params: { clientId: string } }>(
    '/account/applications/:clientId/revoke',
    async (request, reply) => {
      const session = await pages.session(request, reply)
      if (!session) return pages.redirect(request, reply, 'sign-in')
      try {
        await pages
          .api(request, session.accessToken)
          .revokeMyApplication({ path: { clientId: request.params.clientId } })
      } catch {
        // Revoked already, or never this user's: the page shows what is connected.
        return pages.redirect(request, reply, 'account')
      }
      return pages.redirect(request, reply, 'account?done=app-revoked#apps-h')
    },
  )
}
