// The tenants' Providers, built on demand and kept in a bounded LRU cache (STYLE, "one
// Provider per tenant in a bounded pool"): a Provider holds no state of its own (the
// adapter keeps everything in PostgreSQL), so evicting one costs only a rebuild (a few
// milliseconds) and memory stays flat however many tenants are touched in turn.
import type { Tenant } from '../tenants/queries.ts'
import { buildProvider, type OidcProvider, type ProviderDeps } from './provider.ts'

export const DEFAULT_POOL_SIZE = 200

interface Entry {
  slug: string
  provider: OidcProvider
  handler: (req: unknown, res: unknown) => void
}

export class ProviderPool {
  private readonly entries = new Map<string, Entry>()
  private readonly deps: ProviderDeps
  readonly max: number

  constructor(deps: ProviderDeps, max = DEFAULT_POOL_SIZE) {
    this.deps = deps
    this.max = max
  }

  get size(): number {
    return this.entries.size
  }

  /** The tenant's request handler; the most recently used entries stay. */
  handler(tenant: Pick<Tenant, 'id' | 'slug'>): Entry['handler'] {
    const found = this.entries.get(tenant.id)
    if (found && found.slug === tenant.slug) {
      // Map keeps insertion order: re-inserting marks it the most recent.
      this.entries.delete(tenant.id)
      this.entries.set(tenant.id, found)
      return found.handler
    }
    const provider = buildProvider(this.deps, tenant)
    const entry = { slug: tenant.slug, provider, handler: provider.callback() }
    this.entries.set(tenant.id, entry)
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value
      if (oldest === undefined) break
      this.entries.delete(oldest)
    }
    return entry.handler
  }
}
