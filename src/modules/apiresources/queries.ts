// The queries of the api_resources table; no other file writes it. Every query names the
// tenant; an identifier is unique within its tenant (api_resources_tenant_identifier).
import type { Db, Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, eq, sql } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { isTransaction, perDatabase } from '../../db/prepared.ts'
import { apiResources } from '../../db/schema.ts'

export type ApiResource = typeof apiResources.$inferSelect
export type NewApiResource = typeof apiResources.$inferInsert

/** Inserts a resource; undefined when the identifier is taken in the tenant (no exception). */
export async function insertApiResource(db: Handle, row: NewApiResource) {
  const rows = await db.insert(apiResources).values(row).onConflictDoNothing().returning()
  return rows[0] as ApiResource | undefined
}

export function findApiResource(
  db: Handle,
  tenantId: string,
  id: string,
): Promise<ApiResource | undefined> {
  return findOwned(db, apiResources, tenantId, id)
}

const byIdentifier = (db: Handle) =>
  db
    .select()
    .from(apiResources)
    .where(
      and(
        eq(apiResources.tenantId, sql.placeholder('tenantId')),
        eq(apiResources.identifier, sql.placeholder('identifier')),
      ),
    )
    .limit(1)

// Prepared: the provider reads it on every token request that names a resource.
const preparedByIdentifier = perDatabase((db: Db) =>
  byIdentifier(db).prepare('api_resource_by_identifier'),
)

/** The resource a client names with RFC 8707 `resource` at this tenant's issuer. */
export async function findApiResourceByIdentifier(
  db: Handle,
  tenantId: string,
  identifier: string,
) {
  const params = { tenantId, identifier }
  const rows = isTransaction(db)
    ? await byIdentifier(db).execute(params)
    : await preparedByIdentifier(db as Db).execute(params)
  return rows[0] as ApiResource | undefined
}

export const listApiResources = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, apiResources, tenantId, page)

/**
 * Changes a resource; answers 'taken' when a new identifier belongs to another resource
 * of the tenant (checked by the unique index, so a race cannot slip past).
 */
export async function updateApiResource(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewApiResource>,
): Promise<ApiResource | undefined | 'taken'> {
  if (changes.identifier !== undefined) {
    const owner = await findApiResourceByIdentifier(db, tenantId, changes.identifier)
    if (owner && owner.id !== id) return 'taken'
  }
  const rows = await db
    .update(apiResources)
    .set(changes)
    .where(and(eq(apiResources.tenantId, tenantId), eq(apiResources.id, id)))
    .returning()
  return rows[0] as ApiResource | undefined
}

export async function deleteApiResource(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .delete(apiResources)
    .where(and(eq(apiResources.tenantId, tenantId), eq(apiResources.id, id)))
    .returning()
  return rows[0] as ApiResource | undefined
}

/**
 * A custom role renamed (`to` its new name) or deleted (`to` null) in every scope's `roles`
 * of the tenant's resources (CONTRACT §17: deleting a role removes it from every mapping;
 * a scope names roles by name). `from` is the old name in lower case.
 */
export async function renameScopeRole(
  db: Handle,
  tenantId: string,
  from: string,
  to: string | null,
): Promise<void> {
  const rows = await db.select().from(apiResources).where(eq(apiResources.tenantId, tenantId))
  for (const row of rows) {
    if (!row.scopes.some((s) => s.roles.some((r) => r.toLowerCase() === from))) continue
    const scopes = row.scopes.map((s) => ({
      ...s,
      roles: s.roles.flatMap((r) => (r.toLowerCase() !== from ? [r] : to === null ? [] : [to])),
    }))
    await db
      .update(apiResources)
      .set({ scopes })
      .where(and(eq(apiResources.tenantId, tenantId), eq(apiResources.id, row.id)))
  }
}
