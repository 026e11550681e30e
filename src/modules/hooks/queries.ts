// The queries of the hooks table (CONTRACT §21); no other file writes it.
import type { Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, eq } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { hooks } from '../../db/schema.ts'

export type Hook = typeof hooks.$inferSelect
export type NewHook = typeof hooks.$inferInsert

/** The new row, or undefined when the tenant already has a hook for the event. */
export async function insertHook(db: Handle, row: NewHook): Promise<Hook | undefined> {
  const rows = await db.insert(hooks).values(row).onConflictDoNothing().returning()
  return rows[0]
}

export function findHook(db: Handle, tenantId: string, id: string): Promise<Hook | undefined> {
  return findOwned(db, hooks, tenantId, id)
}

/** Oldest first; `after` is the id of the last hook of the page before. */
export const listHooks = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, hooks, tenantId, page)

/** Every hook of the tenant (at most one per event). */
export function tenantHooks(db: Handle, tenantId: string): Promise<Hook[]> {
  return db.select().from(hooks).where(eq(hooks.tenantId, tenantId))
}

export async function updateHook(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewHook>,
): Promise<Hook | undefined> {
  const rows = await db
    .update(hooks)
    .set(changes)
    .where(and(eq(hooks.tenantId, tenantId), eq(hooks.id, id)))
    .returning()
  return rows[0]
}

export async function deleteHook(
  db: Handle,
  tenantId: string,
  id: string,
): Promise<Hook | undefined> {
  const rows = await db
    .delete(hooks)
    .where(and(eq(hooks.tenantId, tenantId), eq(hooks.id, id)))
    .returning()
  return rows[0]
}
