// Tenants are read on every tenant route, so they are cached by slug for a short time.
// The instance that changes a tenant forgets it at once; other instances see the change
// within TTL_MS (documented in README, Consistency).
import type { Db } from '../../db/client.ts'
import { findTenantBySlug, logoExists, type Tenant } from './queries.ts'

const TTL_MS = 2000
/** At most this many tenants are kept, however many are served (CONTRACT §11 pool memory). */
const MAX_ENTRIES = 1000

/**
 * Entries in the order they were stored, so the oldest is first: storing one drops every
 * entry past its TTL from the front, and the oldest while more than MAX_ENTRIES are kept.
 * Memory follows the tenants served in the last TTL_MS, never the tenants ever served.
 */
export class FreshMap<V> extends Map<string, { value: V; at: number }> {
  fresh(key: string, now: number): V | undefined {
    const hit = this.get(key)
    return hit && now - hit.at < TTL_MS ? hit.value : undefined
  }

  store(key: string, value: V, now: number): void {
    this.delete(key)
    this.set(key, { value, at: now })
    for (const [oldest, entry] of this) {
      if (now - entry.at < TTL_MS && this.size <= MAX_ENTRIES) break
      this.delete(oldest)
    }
  }
}

export class TenantCache {
  private readonly db: Db
  private readonly entries = new FreshMap<Tenant>()
  private readonly logos = new FreshMap<boolean>()
  constructor(db: Db) {
    this.db = db
  }

  /** The cached tenant while it is fresh, without waiting: most requests end here. */
  peek(slug: string): Tenant | undefined {
    return this.entries.fresh(slug, Date.now())
  }

  async bySlug(slug: string): Promise<Tenant | undefined> {
    const fresh = this.peek(slug)
    if (fresh) return fresh
    const now = Date.now()
    const tenant = await findTenantBySlug(this.db, slug)
    if (tenant) {
      this.entries.store(slug, tenant, now)
    } else {
      this.entries.delete(slug)
    }
    return tenant
  }

  forget(slug: string): void {
    this.entries.delete(slug)
  }

  /** Whether the tenant has a logo (for `logoUrl`), cached like the tenant itself. */
  async hasLogo(tenantId: string): Promise<boolean> {
    const now = Date.now()
    const hit = this.logos.fresh(tenantId, now)
    if (hit !== undefined) return hit
    const present = await logoExists(this.db, tenantId)
    this.logos.store(tenantId, present, now)
    return present
  }

  forgetLogo(tenantId: string): void {
    this.logos.delete(tenantId)
  }
}
