// The queries of the tenants and tenant_logos tables; no other file writes them (the
// key rotation's rewrite of sealed secrets, which crosses tenants, is in db/sealed-column.ts).

import type { Db, Handle } from '../../db/client.ts'
import { and, eq, isNull, or, sql } from '../../db/orm.ts'
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

/**
 * Marks a live tenant deleted (CONTRACT §9): from now on the slug names no tenant, yet
 * stays taken (the unique index) until the purge removes the row. Answers the tenant.
 */
export async function softDeleteTenant(db: Handle, tenantId: string, now: Date) {
  const rows = await db
    .update(tenants)
    .set({ deletedAt: now, updatedAt: now })
    .where(and(eq(tenants.id, tenantId), isNull(tenants.deletedAt)))
    .returning()
  return rows[0] as Tenant | undefined
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

// The identity-provider credentials of a tenant (CONTRACT §7).
/** Stores a tenant's client credentials (the secret already sealed) and enables the flow. */
export async function storeCredentials(
  db: Handle,
  tenantId: string,
  clientId: string,
  clientSecretEnc: string,
  now: Date,
): Promise<boolean> {
  const rows = await db
    .update(tenants)
    .set({
      idpClientId: clientId,
      idpClientSecretEnc: clientSecretEnc,
      idpOauthEnabled: true,
      updatedAt: now,
    })
    .where(and(eq(tenants.id, tenantId), isNull(tenants.deletedAt)))
    .returning({ id: tenants.id })
  return rows.length > 0
}

/** Removes a tenant's credentials; answers whether there was anything to remove. */
export async function removeCredentials(db: Handle, tenantId: string, now: Date) {
  const rows = await db
    .update(tenants)
    .set({ idpClientId: null, idpClientSecretEnc: null, idpOauthEnabled: false, updatedAt: now })
    .where(
      and(
        eq(tenants.id, tenantId),
        isNull(tenants.deletedAt),
        or(
          sql`${tenants.idpClientId} IS NOT NULL`,
          sql`${tenants.idpClientSecretEnc} IS NOT NULL`,
          eq(tenants.idpOauthEnabled, true),
        ),
      ),
    )
    .returning({ id: tenants.id })
  return rows.length > 0
}

/** The tenant's credentials as stored now (the tenant cache may lag other instances). */
export async function findCredentials(db: Handle, tenantId: string) {
  const rows = await db
    .select({
      enabled: tenants.idpOauthEnabled,
      clientId: tenants.idpClientId,
      clientSecretEnc: tenants.idpClientSecretEnc,
    })
    .from(tenants)
    .where(and(eq(tenants.id, tenantId), isNull(tenants.deletedAt)))
    .limit(1)
  return rows[0]
}
