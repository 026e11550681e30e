// The queries of the hooks and hook_calls tables (CONTRACT §21); no other file writes them.
import { FLUSH_LATER, type Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, desc, eq, sql } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { hookCallLog, hooks } from '../../db/schema.ts'
import { HOOK_CALLS_KEPT } from './schemas.ts'

export type Hook = typeof hooks.$inferSelect
export type NewHook = typeof hooks.$inferInsert
export type HookCallRow = typeof hookCallLog.$inferSelect

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

/**
 * Writes calls, many in one statement, then deletes what is past each of their hooks'
 * newest HOOK_CALLS_KEPT. A call of a hook deleted meanwhile is skipped (the join), not an
 * error for the rest. Both statements commit without waiting for the disk (FLUSH_LATER):
 * a crash may lose the last calls' lines, nothing more.
 */
export async function recordHookCalls(db: Handle, calls: HookCallRow[]): Promise<void> {
  if (calls.length === 0) return
  const column = <K extends keyof HookCallRow>(key: K) => sql.param(calls.map((c) => c[key]))
  await db.execute(sql`
    INSERT INTO hook_calls (tenant_id, id, hook_id, at, outcome, duration_ms, status, test, error)
    SELECT c.tenant_id, c.id, c.hook_id, c.at, c.outcome, c.duration_ms, c.status, c.test, c.error
    FROM unnest(${column('tenantId')}::uuid[], ${column('id')}::uuid[],
      ${column('hookId')}::uuid[], ${sql.param(calls.map((c) => c.at.toISOString()))}::timestamptz[],
      ${column('outcome')}::text[], ${column('durationMs')}::int[], ${column('status')}::int[],
      ${column('test')}::boolean[], ${column('error')}::text[])
      AS c(tenant_id, id, hook_id, at, outcome, duration_ms, status, test, error)
    JOIN hooks h ON h.tenant_id = c.tenant_id AND h.id = c.hook_id
    WHERE ${FLUSH_LATER}`)
  await db.execute(sql`
    DELETE FROM hook_calls o
    USING (SELECT DISTINCT * FROM unnest(${column('tenantId')}::uuid[], ${column('hookId')}::uuid[])
      AS k(tenant_id, hook_id)) k
    WHERE o.tenant_id = k.tenant_id AND o.hook_id = k.hook_id AND ${FLUSH_LATER}
      AND (o.at, o.id) < (
        SELECT n.at, n.id FROM hook_calls n
        WHERE n.tenant_id = k.tenant_id AND n.hook_id = k.hook_id
        ORDER BY n.at DESC, n.id DESC
        OFFSET ${HOOK_CALLS_KEPT - 1} LIMIT 1)`)
}

/** A hook's kept calls, newest first. */
export function listHookCalls(
  db: Handle,
  tenantId: string,
  hookId: string,
): Promise<HookCallRow[]> {
  return db
    .select()
    .from(hookCallLog)
    .where(and(eq(hookCallLog.tenantId, tenantId), eq(hookCallLog.hookId, hookId)))
    .orderBy(desc(hookCallLog.at), desc(hookCallLog.id))
    .limit(HOOK_CALLS_KEPT)
}
