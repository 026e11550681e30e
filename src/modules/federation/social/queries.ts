// The queries of social_connections (CONTRACT §19). Every query names its tenant; no other
// file writes the table but db/cross-tenant.ts (key rotation's scan).
import type { Handle } from '../../../db/client.ts'
import { type Paging, pageOwned } from '../../../db/keyset.ts'
import { and, asc, eq } from '../../../db/orm.ts'
import { findOwned } from '../../../db/owned.ts'
import { socialConnections } from '../../../db/schema.ts'

export type SocialConnection = typeof socialConnections.$inferSelect
export type NewSocialConnection = typeof socialConnections.$inferInsert

export async function insertSocialConnection(db: Handle, row: NewSocialConnection) {
  const rows = await db.insert(socialConnections).values(row).returning()
  return rows[0] as SocialConnection
}

export function findSocialConnection(
  db: Handle,
  tenantId: string,
  id: string,
): Promise<SocialConnection | undefined> {
  return findOwned(db, socialConnections, tenantId, id)
}

/** Oldest first; `after` is the id of the last connection of the page before. */
export const listSocialConnections = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, socialConnections, tenantId, page)

/** The enabled connections, in the buttons' order (then oldest first). */
export function listEnabledSocialConnections(db: Handle, tenantId: string) {
  return db
    .select()
    .from(socialConnections)
    .where(and(eq(socialConnections.tenantId, tenantId), eq(socialConnections.enabled, true)))
    .orderBy(
      asc(socialConnections.sortOrder),
      asc(socialConnections.createdAt),
      asc(socialConnections.id),
    )
    .limit(100)
}

export async function updateSocialConnection(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewSocialConnection>,
) {
  const rows = await db
    .update(socialConnections)
    .set(changes)
    .where(and(eq(socialConnections.tenantId, tenantId), eq(socialConnections.id, id)))
    .returning()
  return rows[0] as SocialConnection | undefined
}

export async function deleteSocialConnection(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .delete(socialConnections)
    .where(and(eq(socialConnections.tenantId, tenantId), eq(socialConnections.id, id)))
    .returning()
  return rows[0] as SocialConnection | undefined
}
