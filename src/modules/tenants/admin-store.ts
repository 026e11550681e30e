// The database side of tenant administration: the settings row and the logo. Every
// query names the tenant by id.
import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Handle } from '../../db/client.ts'
import { tenantLogos, tenants } from '../../db/schema.ts'
import type { NewTenant, Tenant } from './store.ts'

export type Logo = typeof tenantLogos.$inferSelect

const hasLogo = sql<boolean>`exists (select 1 from tenant_logos l where l.tenant_id = ${tenants.id})`

/** The live tenant with whether it has a logo; `lock` holds the row until the commit. */
export async function findTenantById(
  db: Handle,
  tenantId: string,
  options: { lock?: boolean } = {},
): Promise<{ tenant: Tenant; hasLogo: boolean } | undefined> {
  const query = db
    .select({ tenant: tenants, hasLogo })
    .from(tenants)
    .where(and(eq(tenants.id, tenantId), isNull(tenants.deletedAt)))
    .limit(1)
  const rows = options.lock ? await query.for('update', { of: tenants }) : await query
  return rows[0]
}

export async function updateTenant(
  db: Handle,
  tenantId: string,
  changes: Partial<NewTenant>,
): Promise<Tenant | undefined> {
  const rows = await db
    .update(tenants)
    .set(changes)
    .where(and(eq(tenants.id, tenantId), isNull(tenants.deletedAt)))
    .returning()
  return rows[0]
}

/** Stores the tenant's logo, replacing the one before. */
export async function upsertLogo(db: Handle, logo: Logo): Promise<void> {
  await db
    .insert(tenantLogos)
    .values(logo)
    .onConflictDoUpdate({
      target: tenantLogos.tenantId,
      set: { mimeType: logo.mimeType, data: logo.data, etag: logo.etag, updatedAt: logo.updatedAt },
    })
}

export async function findLogo(db: Handle, tenantId: string): Promise<Logo | undefined> {
  const rows = await db.select().from(tenantLogos).where(eq(tenantLogos.tenantId, tenantId))
  return rows[0]
}

/** Removes the logo; answers whether there was one. */
export async function deleteLogo(db: Handle, tenantId: string): Promise<boolean> {
  const rows = await db
    .delete(tenantLogos)
    .where(eq(tenantLogos.tenantId, tenantId))
    .returning({ tenantId: tenantLogos.tenantId })
  return rows.length > 0
}
