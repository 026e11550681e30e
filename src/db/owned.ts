// Reads of a tenant's own records, keyed by (tenant_id, id) like every such table
// (db/schema.ts tenantOwned): the tenant is part of every lookup, so no read can reach
// another tenant's row by its id.
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import type { Handle } from './client.ts'
import { and, eq, type PgTable } from './orm.ts'

type OwnedTable = PgTable & { tenantId: AnyPgColumn; id: AnyPgColumn }

/** The tenant's record `id` of `table`, or undefined. */
export async function findOwned<T extends OwnedTable>(
  db: Handle,
  table: T,
  tenantId: string,
  id: string,
): Promise<T['$inferSelect'] | undefined> {
  const rows = await db
    .select()
    .from(table as PgTable)
    .where(and(eq(table.tenantId, tenantId), eq(table.id, id)))
    .limit(1)
  return rows[0] as T['$inferSelect'] | undefined
}
