// The keyset condition of the lists read oldest first (CONTRACT §2, Lists; lib/paging.ts):
// the rows after the one a cursor names, in (created_at, id) order. The cursor carries only
// the row's id; its created_at is read inside the same query, within the same tenant.
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core'
import { sql } from './orm.ts'

type TenantTable = PgTable & { tenantId: AnyPgColumn; createdAt: AnyPgColumn; id: AnyPgColumn }

/** Rows of `table` after the row `after` of the tenant; undefined (no condition) without one. */
export function afterRow(table: TenantTable, tenantId: string, after: string | undefined) {
  if (!after) return undefined
  return sql`(${table.createdAt}, ${table.id}) > (
    SELECT c.created_at, c.id FROM ${table} c WHERE c.tenant_id = ${tenantId} AND c.id = ${after})`
}
