// The keyset condition of the lists read oldest first (CONTRACT §2, Lists; lib/paging.ts):
// the rows after the one a cursor names, in (created_at, id) order. The cursor carries only
// the row's id; its created_at is read inside the same query, within the same tenant.
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core'
import type { Handle } from './client.ts'
import { and, asc, eq, sql } from './orm.ts'

type TenantTable = PgTable & { tenantId: AnyPgColumn; createdAt: AnyPgColumn; id: AnyPgColumn }

/** Rows of `table` after the row `after` of the tenant; undefined (no condition) without one. */
export function afterRow(table: TenantTable, tenantId: string, after: string | undefined) {
  if (!after) return undefined
  return sql`(${table.createdAt}, ${table.id}) > (
    SELECT c.created_at, c.id FROM ${table} c WHERE c.tenant_id = ${tenantId} AND c.id = ${after})`
}

/** Where a page starts and how long it is: `after` is the id of the last row of the page before. */
export type Paging = { limit: number; after?: string }

/** A page of the tenant's rows of `table`, oldest first, after the row `after` names. */
export async function pageOwned<T extends TenantTable>(
  db: Handle,
  table: T,
  tenantId: string,
  options: Paging,
): Promise<T['$inferSelect'][]> {
  const rows = await db
    .select()
    .from(table as PgTable)
    .where(and(eq(table.tenantId, tenantId), afterRow(table, tenantId, options.after)))
    .orderBy(asc(table.createdAt), asc(table.id))
    .limit(options.limit)
  return rows as T['$inferSelect'][]
}
