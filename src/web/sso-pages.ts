// The hosted pages' part of an SSO sign-in (modules/federation/pages.ts): app.ts hands these
// to the federation module, so it never imports web/.
import type { Config } from '../config.ts'
import type { Db } from '../db/client.ts'
import { type MessageKey, offeredLocales, translator } from '../i18n/index.ts'
import type { FieldCipher } from '../lib/crypto.ts'
import type { SsoPages } from '../modules/federation/pages.ts'
import { tenantHasLogo } from '../modules/tenants/service.ts'
import { html } from './html.ts'
import { setPageHeaders } from './http.ts'
import { requestLocale } from './lang-cookie.ts'
import { page } from './layout.ts'
import { beginSession, interactionPath, isInteractionUid, pagePath } from './session.ts'

/** Why a social sign-in was refused, where its words differ from an SSO sign-in's. */
const SOCIAL_REFUSALS: Record<string, MessageKey> = {
  email_taken: 'social.refusal.email_taken',
  signup_disabled: 'social.refusal.signup_disabled',
  sso_required: 'social.refusal.sso_required',
  email_not_verified: 'social.refusal.email_not_verified',
  idp_exchange_failed: 'social.refusal.idp_exchange_failed',
  idp_error: 'social.refusal.idp_error',
  invalid_state: 'idp.refusal.invalid_state',
  unavailable: 'social.refusal.unavailable',
  not_found: 'social.refusal.not_found',
  connection_disabled: 'social.refusal.connection_disabled',
  mfa_required: 'social.refusal.mfa_required',
  validation: 'social.refusal.validation',
  identity_linked_elsewhere: 'social.refusal.identity_linked_elsewhere',
  session_revoked: 'social.refusal.session_revoked',
}

/** Why an SSO sign-in was refused (its `metadata.reason`), in the catalogue's words. */
const REFUSALS: Record<string, MessageKey> = {
  sso_user_not_provisioned: 'sso.refusal.sso_user_not_provisioned',
  connection_disabled: 'sso.refusal.connection_disabled',
  account_suspended: 'errors.reason.account_suspended',
  invalid_credentials: 'sso.refusal.invalid_credentials',
  mfa_required: 'sso.refusal.mfa_required',
  email_taken: 'sso.refusal.email_taken',
  unconfirmed_account: 'sso.refusal.unconfirmed_account',
  // The SAML IdP's refusals of a service provider's request (modules/samlidp/routes.ts).
  saml_malformed: 'sso.refusal.saml_malformed',
  saml_unknown_sp: 'sso.refusal.saml_unknown_sp',
  saml_acs_unregistered: 'sso.refusal.saml_acs_unregistered',
  saml_request_unsigned: 'sso.refusal.saml_request_unsigned',
  saml_bad_signature: 'sso.refusal.saml_bad_signature',
  saml_binding_unsupported: 'sso.refusal.saml_binding_unsupported',
  saml_wrong_destination: 'sso.refusal.saml_wrong_destination',
  saml_request_expired: 'sso.refusal.saml_request_expired',
  saml_request_not_yet_valid: 'sso.refusal.saml_request_not_yet_valid',
  saml_request_replayed: 'sso.refusal.saml_request_replayed',
  not_found: 'sso.refusal.not_found',
  saml_unavailable: 'sso.refusal.saml_unavailable',
}

export function ssoPages(deps: { config: Config; cipher: FieldCipher; db: Db }): SsoPages {
  return {
    headers: setPageHeaders,
    async refusal(request, tenant, reason, hookWords, kind = 'sso') {
      const locale = requestLocale(request, deps.config.publicUrl, tenant)
      const t = translator(locale)
      const own = kind === 'social' && Object.hasOwn(SOCIAL_REFUSALS, reason)
      const key = own
        ? SOCIAL_REFUSALS[reason]
        : Object.hasOwn(REFUSALS, reason)
          ? REFUSALS[reason]
          : 'sso.refusal.default'
      const words = hookWords ?? t(key)
      const heading = kind === 'social' ? t('social.refusalHeading') : t('sso.refusalHeading')
      const body = html`<h1>${heading}</h1>
<div class="error-summary" role="alert"><p>${words}</p></div>
<p><a class="button" href="${pagePath(tenant.slug)}/sign-in">${t('common.backToSignIn')}</a></p>
<p class="hint">${t('oidcError.code', { code: reason })}</p>`
      const hasLogo = await tenantHasLogo(deps, tenant.id)
      const brand = {
        tenant,
        logoUrl: hasLogo ? `/v1/${tenant.slug}/logo` : undefined,
        locale,
        locales: offeredLocales(tenant.locales),
        path: `${pagePath(tenant.slug)}/sign-in`,
      }
      return page(brand, t('oidcError.title'), body, { noScript: true }).value
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
    accountPath: (slug, done) => `${pagePath(slug)}/account?done=${encodeURIComponent(done)}`,
    isInteractionUid,
  }
}
