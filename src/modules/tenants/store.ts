// The only file of this module that touches the database.
import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Db, Handle } from '../../db/client.ts'
import { perDatabase } from '../../db/prepared.ts'
import { tenantLogos, tenants } from '../../db/schema.ts'

export type Tenant = typeof tenants.$inferSelect
export type NewTenant = typeof tenants.$inferInsert

const bySlug = perDatabase((db: Db) =>
  db
    .select()
    .from(tenants)
    .where(and(eq(tenants.slug, sql.placeholder('slug')), isNull(tenants.deletedAt)))
    .limit(1)
    .prepare('tenant_by_slug'),
)

export async function findTenantBySlug(db: Db, slug: string): Promise<Tenant | undefined> {
  const rows = await bySlug(db).execute({ slug })
  return rows[0]
}

/** Inserts a tenant; answers undefined when the slug is taken (no exception on the race). */
export async function insertTenant(db: Handle, tenant: NewTenant): Promise<Tenant | undefined> {
  const rows = await db.insert(tenants).values(tenant).onConflictDoNothing().returning()
  return rows[0]
}

const logoByTenant = perDatabase((db: Db) =>
  db
    .select({ tenantId: tenantLogos.tenantId })
    .from(tenantLogos)
    .where(eq(tenantLogos.tenantId, sql.placeholder('tenantId')))
    .limit(1)
    .prepare('logo_exists'),
)

export async function logoExists(db: Db, tenantId: string): Promise<boolean> {
  return (await logoByTenant(db).execute({ tenantId })).length > 0
}
