// Tenants are read on every tenant route, so they are cached by slug for a short time.
// The instance that changes a tenant forgets it at once; other instances see the change
// within TTL_MS (documented in README, Consistency).
import type { Db } from '../../db/client.ts'
import { findTenantBySlug, logoExists, type Tenant } from './queries.ts'

const TTL_MS = 2000

export class TenantCache {
  private readonly db: Db
  private readonly entries = new Map<string, { tenant: Tenant; at: number }>()
  private readonly logos = new Map<string, { present: boolean; at: number }>()
  constructor(db: Db) {
    this.db = db
  }

  /** The cached tenant while it is fresh, without waiting: most requests end here. */
  peek(slug: string): Tenant | undefined {
    const hit = this.entries.get(slug)
    return hit && Date.now() - hit.at < TTL_MS ? hit.tenant : undefined
  }

  async bySlug(slug: string): Promise<Tenant | undefined> {
    const fresh = this.peek(slug)
    if (fresh) return fresh
    const now = Date.now()
    const tenant = await findTenantBySlug(this.db, slug)
    if (tenant) {
      if (this.entries.size > 10_000) this.entries.clear()
      this.entries.set(slug, { tenant, at: now })
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
    const hit = this.logos.get(tenantId)
    const now = Date.now()
    if (hit && now - hit.at < TTL_MS) return hit.present
    const present = await logoExists(this.db, tenantId)
    if (this.logos.size > 10_000) this.logos.clear()
    this.logos.set(tenantId, { present, at: now })
    return present
  }

  forgetLogo(tenantId: string): void {
    this.logos.delete(tenantId)
  }
}
