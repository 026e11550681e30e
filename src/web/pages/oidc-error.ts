// oidc-provider's error page (its `renderError` hook) among the hosted pages: a request the
// provider refuses without sending the browser back to the application (an unknown client,
// an unregistered redirect or post-logout URI, a malformed request) is answered here, in
// the tenant's look, with the provider's status and never a redirect. The error and its
// description come from the request, so they are escaped like any text (html.ts); the page
// has nothing for the pages' script to do, so it carries none.
import type { Db } from '../../db/client.ts'
import { html } from '../html.ts'
import { type KoaContext, providerT, sendProviderPage } from '../provider-page.ts'

interface ProviderError {
  error?: string
  error_description?: string
}

export function errorPage(db: Db, tenantId: string) {
  return async function renderError(ctx: KoaContext, out: ProviderError): Promise<void> {
    const t = await providerT(db, tenantId, ctx)
    const body = html`<h1>${t('oidcError.heading')}</h1>
<div class="error-summary" role="alert">
  <p>${t('oidcError.notAccepted')}</p>
  ${out.error_description && html`<p lang="en">${out.error_description}</p>`}
</div>
<p>${t('oidcError.text')}</p>
<p class="hint">${t('oidcError.code', { code: out.error ?? 'invalid_request' })}</p>`
    await sendProviderPage(db, tenantId, ctx, t('oidcError.title'), body, {
      status: ctx.status,
      noScript: true,
      // An answer of the authorization endpoint, in the window (a popup too) it runs in.
      authorization: true,
    })
  }
}
