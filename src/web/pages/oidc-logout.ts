// RP-initiated logout 1.0 on the hosted pages (CONTRACT §11, Logout). An application sends
// the browser to {issuer}/session/end (end_session_endpoint) with `id_token_hint` or
// `client_id`, and optionally a `post_logout_redirect_uri` (only a registered one: any
// other is oidc-provider's 400 HTML error page, never a redirect) and `state`. Then:
//   - logoutSource: a page asking "Sign out of {tenant}?" (oidc-provider keeps the form's
//     CSRF secret, `xsrf`, in its session); Sign out ends the whole sign-in, Stay signed in
//     ends only the asking application's;
//   - on Sign out oidc-provider sends the back-channel logout tokens of the applications
//     of that provider session and ends it; then the hosted page session it was signed in
//     from ends too (modules/oidc/logout.ts);
//   - the browser goes to the post-logout URI with `state`, or to postLogoutSuccessSource.
import type { Deps } from '../../deps.ts'
import { tenantById } from '../../modules/tenants/service.ts'
import { type Html, html } from '../html.ts'
import { type KoaContext, providerT, sendProviderPage } from '../provider-page.ts'
import { pagePath } from '../session.ts'

interface LogoutContext extends KoaContext {
  oidc: {
    urlFor(route: string): string
    session?: { state?: { secret?: string } }
    params?: { post_logout_redirect_uri?: string }
    client?: { clientId: string; clientName?: string }
  }
}

export function logoutPages(db: Deps['db'], tenant: { id: string; slug: string }) {
  async function logoutSource(ctx: LogoutContext, _form: string) {
    const found = await tenantById({ db }, tenant.id)
    const workspace = found?.tenant.name ?? tenant.slug
    const client = ctx.oidc.client
    const asking = client ? client.clientName || client.clientId : undefined
    const secret = ctx.oidc.session?.state?.secret ?? ''
    const t = await providerT(db, tenant.id, ctx)
    const body: Html = html`<h1>${t('logout.heading', { workspace })}</h1>
${asking ? html`<p>${t('logout.asked', { name: asking })}</p>` : ''}
<p>${t('logout.text', { workspace })}</p>
<form method="post" action="${ctx.oidc.urlFor('end_session_confirm')}" class="consent-actions">
<input type="hidden" name="xsrf" value="${secret}">
<button type="submit" name="logout" value="yes" class="primary">${t('account.signOut')}</button>
<button type="submit">${t('logout.stay')}</button>
</form>`
    await sendProviderPage(db, tenant.id, ctx, t('logout.heading', { workspace }), body, {
      // The confirmation redirects to the application's registered post-logout URI.
      formLeadsTo: ctx.oidc.params?.post_logout_redirect_uri,
      // An application's sign-out, which a popup may carry (oidc-client-ts signoutPopup).
      authorization: true,
    })
  }

  async function postLogoutSuccessSource(ctx: LogoutContext) {
    const client = ctx.oidc.client
    const name = client ? client.clientName || client.clientId : undefined
    const t = await providerT(db, tenant.id, ctx)
    const body = html`<h1>${t('logout.doneHeading')}</h1>
<p>${name ? t('logout.doneOf', { name }) : t('logout.done')} ${t('logout.close')}</p>
<p><a class="button" href="${pagePath(tenant.slug)}/sign-in">${t('logout.signInAgain')}</a></p>`
    await sendProviderPage(db, tenant.id, ctx, t('logout.doneTitle'), body, { authorization: true })
  }

  return { logoutSource, postLogoutSuccessSource }
}
