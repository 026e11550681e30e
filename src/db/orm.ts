// Drizzle, loaded as CommonJS. Imported as ES modules, drizzle-orm costs about 1 s and
// 200 MB of heap at every start: Node parses the package's 179 kB package.json again for
// each of the ~450 files it resolves. The CommonJS build of the same version loads in a
// tenth of the time. Every value taken from drizzle comes through this file (npm run lint
// checks it), so the process holds one build and `instanceof` agrees; type-only imports
// of drizzle are erased and may stay where they are.
import { createRequire } from 'node:module'

// drizzle-kit bundles the schema into CommonJS, where `require` already exists.
const load = typeof require === 'function' ? require : createRequire(import.meta.url)

const orm: typeof import('drizzle-orm') = load('drizzle-orm')
export const {
  and,
  asc,
  desc,
  eq,
  getTableColumns,
  gt,
  inArray,
  isNotNull,
  isNull,
  lt,
  lte,
  ne,
  notInArray,
  or,
  sql,
} = orm
export type { SQL } from 'drizzle-orm'

const core: typeof import('drizzle-orm/pg-core') = load('drizzle-orm/pg-core')
export const {
  bigint,
  boolean,
  customType,
  doublePrecision,
  foreignKey,
  getTableConfig,
  index,
  integer,
  jsonb,
  PgTransaction,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} = core
export type { PgDatabase, PgQueryResultHKT, PgTable } from 'drizzle-orm/pg-core'

/**
 * The node-postgres driver, and the migration files as drizzle reads them: on PostgreSQL the
 * service applies them itself (client.ts), under a transaction-level lock.
 */
export function postgresDriver(): {
  drizzle: typeof import('drizzle-orm/node-postgres').drizzle
  readMigrationFiles: typeof import('drizzle-orm/migrator').readMigrationFiles
} {
  return {
    drizzle: load('drizzle-orm/node-postgres').drizzle,
    readMigrationFiles: load('drizzle-orm/migrator').readMigrationFiles,
  }
}

export function pgliteDriver(): {
  drizzle: typeof import('drizzle-orm/pglite').drizzle
  migrate: typeof import('drizzle-orm/pglite/migrator').migrate
} {
  return {
    drizzle: load('drizzle-orm/pglite').drizzle,
    migrate: load('drizzle-orm/pglite/migrator').migrate,
  }
}
