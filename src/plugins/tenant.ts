// Tenant resolution: every route under /v1/:tenantSlug learns its tenant here, once,
// before anything else runs (CONTRACT §3: an unknown slug is a 404 before anything else).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { AppError } from '../lib/errors.ts'
import { SLUG_PATTERN } from '../modules/tenants/schemas.ts'
import type { Tenant } from '../modules/tenants/tenant.ts'

// The slug rule of tenant creation: anything else names no tenant, so it is a 404 without
// a lookup (CONTRACT §8), whatever it holds (a NUL, a surrogate, 10 kB of text).
const SLUG = new RegExp(SLUG_PATTERN)

declare module 'fastify' {
  interface FastifyRequest {
    tenant: Tenant
  }
}

export function installTenantResolution(app: FastifyInstance, deps: Pick<Deps, 'tenants'>): void {
  app.decorateRequest('tenant', null as unknown as Tenant)
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const slug = (request.params as { tenantSlug?: string } | undefined)?.tenantSlug
    if (slug === undefined) return done()
    if (!SLUG.test(slug)) throw new AppError('tenant_not_found')
    // A fresh cache entry answers at once; only a miss waits for the database.
    const cached = deps.tenants.peek(slug)
    if (cached) {
      request.tenant = cached
      return done()
    }
    deps.tenants.bySlug(slug).then((tenant) => {
      if (!tenant) return done(new AppError('tenant_not_found'))
      request.tenant = tenant
      done()
    }, done)
  })
}

/** The tenant a slug names, for a request that has no route of its own (a wrong method). */
export async function resolveTenant(deps: Pick<Deps, 'tenants'>, slug: string): Promise<Tenant> {
  const tenant = SLUG.test(slug) ? await deps.tenants.bySlug(slug) : undefined
  if (!tenant) throw new AppError('tenant_not_found')
  return tenant
}
