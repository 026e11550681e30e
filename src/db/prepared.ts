// Prepared statements for the queries on the hot paths (sign-in, /me, authentication).
// Drizzle then builds the SQL once instead of on every request, and PostgreSQL plans it
// once per connection. A statement belongs to one database handle, so each is built
// lazily per handle; inside a transaction the caller uses the ordinary query instead.
// `namedStatement` (raw SQL) runs on either: a plain handle or a transaction's connection.

import pg from 'pg'
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
 * builder (a data-modifying CTE) would be planned again on every call. It runs on a plain
 * handle or inside a transaction (on the transaction's connection). PGlite runs it as a
 * plain query. Rows come back keyed by column name, parsed by the driver's own types.
 */
export function namedStatement(name: string, text: string) {
  return async (handle: Handle, values: unknown[]): Promise<Record<string, unknown>[]> => {
    const client = driverClient(handle)
    const result =
      client instanceof pg.Pool || client instanceof pg.Client
        ? await client.query({ name, text, values })
        : await client.query(text, values)
    return result.rows
  }
}

/**
 * The driver's own client under a handle: the pool (or PGlite) of a plain handle, the
 * checked-out connection (or PGlite's transaction) of a transaction.
 */
function driverClient(handle: Handle): DriverClient {
  if (isTransaction(handle)) {
    return (handle as unknown as { session: { client: DriverClient } }).session.client
  }
  return (handle as unknown as { $client: DriverClient }).$client
}

type Rows = Promise<{ rows: Record<string, unknown>[] }>
/** What both drivers' clients offer: pg's Pool or Client (named statements), or PGlite's. */
type DriverClient = pg.Pool | pg.Client | { query(text: string, values: unknown[]): Rows }
