// The pages the tenants' OpenID providers draw, from the hosted pages: app.ts hands them to
// the provider pool (modules/oidc/pages.ts), so the provider module never imports web/.
import type { Db } from '../db/client.ts'
import type { ProviderPages } from '../modules/oidc/pages.ts'
import { devicePages } from './pages/device.ts'
import { errorPage } from './pages/oidc-error.ts'
import { logoutPages } from './pages/oidc-logout.ts'

export function providerPages(db: Db): ProviderPages {
  return {
    device: (tenant) => devicePages(db, tenant.id),
    logout: (tenant) => logoutPages(db, tenant),
    error: (tenant) => errorPage(db, tenant.id),
  }
}
