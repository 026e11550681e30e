// The account page's connected accounts (CONTRACT §19): the outside identities linked to the
// user (GET me/identities), a Remove button each, and a Connect button for each enabled
// social connection the user holds no identity at (the forms: identities.ts).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { localDate } from '../../i18n/format.ts'
import { enabledSocialConnections } from '../../modules/federation/social/service.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'

export interface IdentityItem {
  id: string
  provider: string
  connectionId: string | null
  email: string | null
  linkedAt: string
}

/** The section, or nothing when the tenant has no social connection and the user no identity. */
export async function identitiesSection(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  items: IdentityItem[],
  csrf: string,
) {
  const t = pages.t(request, reply)
  const locale = pages.locale(request, reply)
  const connections = await enabledSocialConnections(pages.deps, request.tenant.id)
  if (items.length === 0 && connections.length === 0) return ''
  const names = new Map(connections.map((c) => [c.id, c.name]))
  const nameOf = (item: IdentityItem) =>
    item.provider === 'sso'
      ? t('account.identitySso')
      : item.provider === 'idp'
        ? t('account.identityIdp')
        : (names.get(item.connectionId ?? '') ?? item.provider)
  const held = new Set(items.map((i) => i.connectionId))
  const open = connections.filter((c) => !held.has(c.id))
  return html`<section aria-labelledby="identities-h">
<h2 id="identities-h">${t('account.identities')}</h2>
<p>${t('account.identitiesIntro')}</p>
${
  items.length === 0
    ? html`<p>${t('account.noIdentities')}</p>`
    : html`<ul class="items">${items.map(
        (item) =>
          html`<li><span><strong>${nameOf(item)}</strong>${item.email ? html`<br>${item.email}` : ''}<br><span class="hint">${t('account.identityAdded', { added: localDate(locale, item.linkedAt) })}</span></span>
<form method="post" action="${pages.url(request, `account/identities/${item.id}/remove`)}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="${t('account.removeIdentityLabel', { name: nameOf(item) })}">${t('account.remove')}</button></form></li>`,
      )}</ul>`
}
${open.map(
  (c) =>
    html`<form method="post" action="${pages.url(request, `account/connect/${c.id}`)}" class="connect"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">${t('account.connect', { name: c.name })}</button></form>`,
)}
</section>`
}
