// Prepared statements for the queries on the hot paths (sign-in, /me, authentication).
// Drizzle then builds the SQL once instead of on every request, and PostgreSQL plans it
// once per connection. A statement belongs to one database handle, so each is built
// lazily per handle; inside a transaction the caller uses the ordinary query instead.

import type { Db, Handle } from './client.ts'
import { PgTransaction } from './orm.ts'

export function isTransaction(handle: Handle): boolean {
  return handle instanceof PgTransaction
}

/** Memoises `build(db)` per database handle. */
export function perDatabase<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>()
  return (db) => {
    let value = built.get(db)
    if (value === undefined) {
      value = build(db)
      built.set(db, value)
    }
    return value
  }
}

/**
 * Raw SQL (`$1`, `$2`… placeholders) that PostgreSQL parses and plans once per connection:
 * drizzle's `execute` sends raw SQL unnamed, so a statement too intricate for the query
 * builder (a data-modifying CTE) would be planned again on every call. PGlite runs it as a
 * plain query. Rows come back keyed by column name, parsed by the driver's own types.
 */
export function namedStatement(name: string, text: string) {
  return async (db: Db, values: unknown[]): Promise<Record<string, unknown>[]> => {
    const client = (db as unknown as { $client: DriverClient }).$client
    const result =
      'totalCount' in client
        ? await client.query({ name, text, values })
        : await client.query(text, values)
    return result.rows
  }
}

type Rows = Promise<{ rows: Record<string, unknown>[] }>
/** What both drivers' clients offer: pg's Pool (named statements) or a PGlite. */
type DriverClient =
  | { totalCount: number; query(config: { name: string; text: string; values: unknown[] }): Rows }
  | { query(text: string, values: unknown[]): Rows }
