// The hosted pages' part of an SSO sign-in (modules/federation/pages.ts): app.ts hands these
// to the federation module, so it never imports web/.
import type { Config } from '../config.ts'
import type { Db } from '../db/client.ts'
import type { FieldCipher } from '../lib/crypto.ts'
import type { SsoPages } from '../modules/federation/pages.ts'
import { tenantHasLogo } from '../modules/tenants/service.ts'
import { html } from './html.ts'
import { setPageHeaders } from './http.ts'
import { page } from './layout.ts'
import { beginSession, interactionPath, isInteractionUid, pagePath } from './session.ts'

export function ssoPages(deps: { config: Config; cipher: FieldCipher; db: Db }): SsoPages {
  return {
    headers: setPageHeaders,
    async refusal(tenant, words, reason) {
      const body = html`<h1>Single sign-on did not work</h1>
<div class="error-summary" role="alert"><p>${words}</p></div>
<p><a class="button" href="${pagePath(tenant.slug)}/sign-in">Back to sign-in</a></p>
<p class="hint">Error code: ${reason}</p>`
      const hasLogo = await tenantHasLogo(deps, tenant.id)
      const brand = { tenant, logoUrl: hasLogo ? `/v1/${tenant.slug}/logo` : undefined }
      return page(brand, 'Sign-in error', body, { noScript: true }).value
    },
    signedIn(request, reply, tenant, session) {
      const ctx = {
        config: deps.config,
        cipher: deps.cipher,
        tenantId: tenant.id,
        slug: tenant.slug,
      }
      beginSession(ctx, request, reply, session)
      return session.interaction
        ? interactionPath(tenant.slug, session.interaction)
        : `${pagePath(tenant.slug)}/account`
    },
    secondFactorPath: (slug) => `${pagePath(slug)}/sign-in/sso/second-factor`,
    isInteractionUid,
  }
}
