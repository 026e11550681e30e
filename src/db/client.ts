// One schema, two drivers: node-postgres in production, embedded PGlite by default.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core'
import pg from 'pg'
import { pgliteDriver, postgresDriver, sql } from './orm.ts'
import * as schema from './schema.ts'

export type Schema = typeof schema
export type Db = PgDatabase<PgQueryResultHKT, Schema>
export type Tx = PgTransaction<PgQueryResultHKT, Schema>
/** Stores take either: a plain handle or the transaction a service opened. */
export type Handle = Db | Tx

export interface Database {
  db: Db
  kind: 'postgres' | 'pglite'
  migrate(): Promise<void>
  ping(): Promise<void>
  /** The connection pool's use, where there is a pool (PostgreSQL). */
  pool?(): { total: number; idle: number; waiting: number }
  close(): Promise<void>
}

/** The longest a query may wait for its answer from PostgreSQL. */
export const QUERY_TIMEOUT_MS = 10_000

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url))
// Any constant shared by every instance: concurrent starts migrate one at a time.
const MIGRATION_LOCK = 7_203_114

/**
 * The extensions every PGlite of the service loads: pg_trgm backs the audit search index
 * (migration 0001), and PGlite loads contrib extensions only when asked.
 */
export async function pgliteExtensions() {
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm')
  return { pg_trgm }
}

/**
 * The embedded database runs inside this process, so its buffers are this process's
 * memory: PostgreSQL's defaults (128 MB of shared buffers, 64 MB for index builds) kept
 * the embedded service at 410-540 MB at rest. It serves development and small installs;
 * with these it rests under 250 MB (issue 10: 223-224 MB with 8 MB of shared buffers,
 * 233-252 MB with 16). PostgreSQL proper is tuned by its operator.
 */
const PGLITE_SETTINGS = [
  'shared_buffers = 8MB',
  'maintenance_work_mem = 16MB',
  'wal_buffers = 1MB',
  'temp_buffers = 2MB',
]

/**
 * How the connections reach PostgreSQL (DATABASE_POOL_MODE, CONTRACT §15). `session`: each
 * connection is a server session of its own (direct, or a PgBouncer in session mode).
 * `transaction`: a PgBouncer in transaction mode may hand each transaction, and each query
 * outside one, to another server connection, so nothing may outlive a transaction: no named
 * prepared statements, no session-level settings or locks.
 */
export type PoolMode = 'session' | 'transaction'

export interface OpenOptions {
  poolMode?: PoolMode
}

export async function openDatabase(
  url: string | undefined,
  dataDir: string,
  open: OpenOptions = {},
): Promise<Database> {
  if (url?.startsWith('postgres')) return openPostgres(url, open.poolMode ?? 'session')
  // Loaded only here: a service on PostgreSQL never holds PGlite's code.
  const { PGlite } = await import('@electric-sql/pglite')
  const options = { extensions: await pgliteExtensions(), postgresqlconf: PGLITE_SETTINGS }
  const client = url?.startsWith('memory://')
    ? new PGlite(options)
    : new PGlite(join(dataDir, 'pglite'), options)
  return pgliteDatabase(client)
}

/** Wraps an open PGlite client (in memory, on disk, or loaded from a data-dir dump). */
export async function pgliteDatabase(client: PGlite): Promise<Database> {
  await client.waitReady
  const { drizzle: drizzlePglite, migrate: migratePglite } = pgliteDriver()
  const db = drizzlePglite(client, { schema }) as unknown as Db
  return {
    db,
    kind: 'pglite',
    migrate: () => migratePglite(drizzlePglite(client, { schema }), { migrationsFolder }),
    ping: async () => {
      await client.query('SELECT 1')
    },
    close: () => client.close(),
  }
}

/**
 * A pool whose checked-out clients cannot leak. Drizzle's transaction (node-postgres
 * session) sends BEGIN before its try/finally, so when BEGIN fails (the connection was
 * killed just after checkout, or PostgreSQL froze and the query timed out) the client is
 * never released: under such faults the pool ran dry and every request answered 503 until
 * a restart (found by the fault suite). Here a checked-out client whose first query fails
 * is released with that error, so the pool discards it; its user's own release, should it
 * come, is then a no-op.
 */
class GuardedPool extends pg.Pool {
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads (callback or promise) pass through.
  override connect(...args: any[]): any {
    // biome-ignore lint/suspicious/noExplicitAny: see above.
    if (args.length > 0) return (super.connect as any)(...args)
    return super.connect().then(guardCheckout)
  }
}

function guardCheckout(client: pg.PoolClient): pg.PoolClient {
  const release = client.release
  let released = false
  client.release = (error?: Error | boolean) => {
    if (released) return
    released = true
    release(error)
  }
  const query = client.query
  // biome-ignore lint/suspicious/noExplicitAny: wraps whichever overload is called.
  ;(client as any).query = (...args: any[]) => {
    // Only the first query is watched; later ones use the prototype's method again.
    // biome-ignore lint/suspicious/noExplicitAny: see above.
    delete (client as any).query
    // biome-ignore lint/suspicious/noExplicitAny: see above.
    const result = (query as any).apply(client, args)
    if (result && typeof result.then === 'function') {
      return result.catch((error: Error) => {
        client.release(error)
        throw error
      })
    }
    return result
  }
  return client
}

/**
 * A client that never names a statement. Named statements (prepared.ts, drizzle's
 * `.prepare(name)`) live in one server session; behind a PgBouncer in transaction mode the
 * next query may land on a server connection that never saw the statement (or one where
 * another client prepared that name), so there every statement is sent unnamed: PostgreSQL
 * parses and plans it per execution, in the same extended-protocol round trip.
 */
class UnnamedStatementClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads pass through.
  override query(...args: any[]): any {
    const first = args[0]
    if (first && typeof first === 'object' && first.name && typeof first.submit !== 'function') {
      args[0] = { ...first, name: undefined }
    }
    // biome-ignore lint/suspicious/noExplicitAny: see above.
    return (super.query as any)(...args)
  }
}

/** The pool's client class for a pool mode. */
export function poolClient(poolMode: PoolMode): typeof pg.Client {
  return poolMode === 'transaction' ? UnnamedStatementClient : pg.Client
}

function openPostgres(url: string, poolMode: PoolMode): Database {
  const pool = new GuardedPool({
    connectionString: url,
    Client: poolClient(poolMode),
    max: 10,
    // While PostgreSQL is down or restarting, a request waits at most this long for a
    // connection, then answers 503: well inside the 30 s request timeout (CONTRACT §8).
    connectionTimeoutMillis: 5000,
    // A query that gets no answer (a server frozen, a network partition) fails after this
    // long instead of holding its request: the request then answers 503.
    query_timeout: QUERY_TIMEOUT_MS,
    // Dead peers (a server that vanished without closing) are noticed by the kernel.
    keepAlive: true,
  })
  // A client that loses its server must not crash the process: the pool listens for
  // errors only on idle clients, and removes its listener from a client while it is
  // checked out (inside a transaction), so each client gets one of its own too.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  const { drizzle: drizzlePg, readMigrationFiles } = postgresDriver()
  const db = drizzlePg(pool, { schema }) as unknown as Db
  return {
    db,
    kind: 'postgres',
    migrate: () => migratePostgres(url, readMigrationFiles({ migrationsFolder })),
    ping: async () => {
      await pool.query('SELECT 1')
    },
    pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => pool.end(),
  }
}

interface MigrationFile {
  sql: string[]
  folderMillis: number
  hash: string
}

/**
 * Applies the migrations not yet applied, in one transaction that first takes a
 * transaction-level advisory lock (CONTRACT §15): instances starting at once migrate one
 * after the other, and the lock ends with the transaction, so it holds through a PgBouncer
 * in transaction mode too (a session-level lock could be taken on one server connection
 * and released on another). It keeps drizzle's bookkeeping: the table
 * drizzle.__drizzle_migrations, one row per migration, the newest `created_at` deciding.
 */
async function migratePostgres(url: string, migrations: MigrationFile[]): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query('CREATE SCHEMA IF NOT EXISTS drizzle')
    await client.query(`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (
      id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`)
    const last = await client.query(
      'SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1',
    )
    const appliedUntil = last.rows.length > 0 ? Number(last.rows[0].created_at) : -1
    for (const migration of migrations) {
      if (migration.folderMillis <= appliedUntil) continue
      for (const statement of migration.sql) await client.query(statement)
      await client.query(
        'INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)',
        [migration.hash, migration.folderMillis],
      )
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A condition that is always true and makes the statement's own transaction commit without
 * waiting for the WAL to reach disk: `set_config(…, true)` is SET LOCAL, read at commit, in
 * the same round trip (and transaction-scoped, so PgBouncer's transaction pooling keeps it
 * to this statement). Only for writes whose loss in a PostgreSQL crash (the last few hundred
 * milliseconds of them) merely repeats work: the webhook worker's claims and outcomes, where
 * a lost write means a delivery sent once more, which at-least-once allows. Put it in a
 * WHERE that matches the rows to write (it is evaluated for them); the worker's throughput
 * was bound by one disk flush per statement without it.
 */
export const FLUSH_LATER = sql`set_config('synchronous_commit', 'off', true) IS NOT NULL`
