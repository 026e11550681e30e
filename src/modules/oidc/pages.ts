// The pages oidc-provider draws itself (the device flow's, the logout confirmation and its
// error page) are hosted pages: web/ renders them and app.ts hands them to the provider
// when the app is built, so this module draws no UI and never imports web/ (issue 36,
// Structure; Logto's oidc/init.ts is handed its pages the same way).
import type { Tenant } from '../tenants/tenant.ts'

/**
 * One of oidc-provider's page hooks. The package ships no types: each hook receives its Koa
 * context and the arguments its option documents, which the page declares for itself.
 */
export type ProviderPageHook = (ctx: never, ...args: never[]) => Promise<void>

type TenantRef = Pick<Tenant, 'id' | 'slug'>

export interface ProviderPages {
  /** RFC 8628's pages: `features.deviceFlow`'s sources (the code form, its confirmation, the end). */
  device(tenant: TenantRef): {
    userCodeInputSource: ProviderPageHook
    userCodeConfirmSource: ProviderPageHook
    successSource: ProviderPageHook
  }
  /** RP-initiated logout's pages: `features.rpInitiatedLogout`'s confirmation and signed-out page. */
  logout(tenant: TenantRef): {
    logoutSource: ProviderPageHook
    postLogoutSuccessSource: ProviderPageHook
  }
  /** `renderError`: a refused request answered with a page and its status, never a redirect. */
  error(tenant: TenantRef): ProviderPageHook
}
