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
