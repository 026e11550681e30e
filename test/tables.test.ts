// One owner per table: every table is written from one queries file of its module, and
// from nowhere else but db/cross-tenant.ts, where the queries that cross tenants on purpose
// (purge, key rotation, the invite lookup by token hash) are kept so that tenant isolation
// can be audited in one place. Writes are found as Drizzle calls (`.insert(users)`) and as
// SQL text (`UPDATE users`).
import assert from 'node:assert/strict'
import { globSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { SEALED_COLUMNS } from '../scripts/rotate-keys.ts'
import { NOT_PRUNED, PRUNED_TABLES, TENANT_PURGE_ORDER } from '../src/db/cross-tenant.ts'
import { getTableConfig, type PgTable } from '../src/db/orm.ts'
import * as schema from '../src/db/schema.ts'
import { ERASURE_DELETES, ERASURE_EXEMPT } from '../src/modules/privacy/erasure.ts'
import { EXPORT_EXEMPT, EXPORT_READS } from '../src/modules/privacy/export.ts'
import { SNAPSHOT_LEFT_OUT } from './db.ts'

const CROSS_TENANT = 'src/db/cross-tenant.ts'

const tables = Object.entries(schema)
  .filter(([, value]) => isTable(value))
  .map(([variable, value]) => ({ variable, name: getTableConfig(value as PgTable).name }))

function isTable(value: unknown): boolean {
  try {
    return typeof getTableConfig(value as PgTable).name === 'string'
  } catch {
    return false
  }
}

function writers(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  const files = globSync('src/**/*.ts').filter(
    (f) => !f.endsWith('.test.ts') && !f.includes('/migrations/'),
  )
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const { variable, name } of tables) {
      const drizzle = new RegExp(`\\.(insert|update|delete)\\(${variable}\\)`)
      const raw = new RegExp(`\\b(INSERT INTO|UPDATE|DELETE FROM) "?${name}"?\\b`)
      if (drizzle.test(text) || raw.test(text)) {
        if (!found.has(name)) found.set(name, new Set())
        found.get(name)?.add(file)
      }
    }
  }
  return found
}

test('the schema has tables to check (the scan itself works)', () => {
  assert.ok(tables.length >= 10, JSON.stringify(tables))
  assert.ok(writers().get('users')?.has('src/modules/users/queries.ts'))
})

/**
 * The one statement that writes two tables on purpose: an audit write queues its webhook
 * deliveries in the same statement (CONTRACT §13, the outbox), so the audit queries file
 * writes webhook_deliveries besides the webhooks queries file.
 */
const ALSO_WRITES: Record<string, string> = {
  webhook_deliveries: 'src/modules/audit/queries.ts',
}

test('every table is written from one queries file (and the cross-tenant file)', () => {
  const problems: string[] = []
  for (const [table, files] of writers()) {
    const owners = [...files].filter((f) => f !== CROSS_TENANT && f !== ALSO_WRITES[table])
    if (owners.length > 1) problems.push(`${table} is written by ${owners.join(', ')}`)
    for (const file of owners) {
      if (!file.endsWith('/queries.ts')) problems.push(`${table} is written by ${file}`)
    }
  }
  assert.deepEqual(problems, [])
})

// The registrations a new table needs (webhooks issue: a new-table checklist enforced).
// Each list is the one the code runs (exported from it), so a table added to the schema
// without its registration fails here.

type Column = { name: string }
type Reference = { table: string; cascade: boolean }

const configs = Object.values(schema)
  .filter(isTable)
  .map((value) => getTableConfig(value as PgTable))
const columnsOf = new Map(configs.map((c) => [c.name, c.columns.map((col: Column) => col.name)]))
const referencesOf = new Map(
  configs.map((c) => [
    c.name,
    c.foreignKeys.map(
      (fk): Reference => ({
        table: getTableConfig(fk.reference().foreignTable).name,
        cascade: fk.onDelete === 'cascade',
      }),
    ),
  ]),
)
const hasColumn = (table: string, column: string) => !!columnsOf.get(table)?.includes(column)
const tenantTables = [...columnsOf.keys()].filter((t) => hasColumn(t, 'tenant_id'))

/**
 * The columns that make a row the user's own. account_id is the OpenID provider's name for
 * the user's id (oidc_models: grants, sessions, codes and tokens of the user). Columns that
 * name a user inside someone else's record are not: an invitation's accepted_user_id (the
 * invite is the inviting admin's; §9 has the erasure revoke the pending ones), an audit
 * row's actor_id (the row is already the user's through user_id, or another's act).
 */
const USER_COLUMNS = ['user_id', 'account_id']
const userTables = [...columnsOf.keys()].filter((t) => USER_COLUMNS.some((c) => hasColumn(t, c)))

/** Tables whose rows go, by ON DELETE CASCADE alone, when a row of one of `roots` goes. */
function cascadingFrom(roots: Iterable<string>): Set<string> {
  const reached = new Set(roots)
  for (let grew = true; grew; ) {
    grew = false
    for (const [table, references] of referencesOf) {
      if (reached.has(table)) continue
      if (references.some((r) => r.cascade && reached.has(r.table))) {
        reached.add(table)
        grew = true
      }
    }
  }
  return reached
}

/** The text of one top-level function of a file (to `}` at the start of a line). */
function functionText(file: string, name: string): string {
  const text = readFileSync(file, 'utf8')
  const start = text.indexOf(`export async function ${name}(`)
  assert.ok(start >= 0, `${file} has ${name}`)
  return text.slice(start, text.indexOf('\n}\n', start))
}

test('every table with tenant_id is removed by the tenant purge, in an order its foreign keys allow', () => {
  const order: readonly string[] = TENANT_PURGE_ORDER
  const removed = cascadingFrom(['tenants', ...order])
  assert.deepEqual(
    tenantTables.filter((t) => !removed.has(t)),
    [],
    'add the table to TENANT_PURGE_ORDER (db/cross-tenant.ts) or reference tenants ON DELETE CASCADE',
  )
  for (const table of order) assert.ok(hasColumn(table, 'tenant_id'), `${table} has tenant_id`)
  // A row deleted in a statement of its own must not be referenced, without a cascade, by
  // a row that goes later (a foreign key error would stop the purge halfway).
  const problems: string[] = []
  for (const [table, references] of referencesOf) {
    for (const r of references) {
      if (r.cascade || (r.table !== 'tenants' && !order.includes(r.table))) continue
      const at = order.indexOf(table)
      if (at < 0 || (r.table !== 'tenants' && at > order.indexOf(r.table))) {
        problems.push(`${table} references ${r.table} without a cascade and goes after it`)
      }
    }
  }
  assert.deepEqual(problems, [])
})

test('every table with tenant_id and expiring rows is pruned, or kept on purpose with a reason', () => {
  const pruned: readonly string[] = PRUNED_TABLES
  const expiring = tenantTables.filter((t) => hasColumn(t, 'expires_at'))
  assert.deepEqual(
    expiring.filter((t) => !pruned.includes(t) && !(t in NOT_PRUNED)),
    [],
    'add the table to PRUNED_TABLES or NOT_PRUNED (db/cross-tenant.ts)',
  )
  for (const table of [...pruned, ...Object.keys(NOT_PRUNED)]) {
    assert.ok(expiring.includes(table), `${table} is a tenant table with expires_at`)
  }
})

test('every tenant table is in the test snapshot that proves a refused request changed nothing', () => {
  const read = functionText('test/db.ts', 'tenantSnapshot') + functionText('test/db.ts', 'codeRows')
  const missing = tables
    .filter(({ name }) => name === 'tenants' || tenantTables.includes(name))
    .filter(({ variable }) => !read.includes(`.from(${variable})`))
    .map(({ name }) => name)
    .filter((name) => !(name in SNAPSHOT_LEFT_OUT))
  assert.deepEqual(missing, [], 'read the table in tenantSnapshot (test/db.ts) or say why not')
  for (const table of Object.keys(SNAPSHOT_LEFT_OUT)) assert.ok(tenantTables.includes(table))
})

test("every table of a user's rows is in the personal-data export and the erasure, or exempt with a reason", () => {
  assert.deepEqual(
    userTables.filter((t) => !(t in EXPORT_READS) && !(t in EXPORT_EXEMPT)),
    [],
    'read the table in EXPORT_READS or list it in EXPORT_EXEMPT (privacy/export.ts)',
  )
  const erased = cascadingFrom(['users', ...Object.keys(ERASURE_DELETES)])
  assert.deepEqual(
    userTables.filter((t) => !erased.has(t) && !(t in ERASURE_EXEMPT)),
    [],
    'delete the rows in ERASURE_DELETES or list the table in ERASURE_EXEMPT (privacy/erasure.ts)',
  )
  // No stale entries: each names a table of the user's rows.
  const named = [
    ...Object.keys(EXPORT_READS),
    ...Object.keys(EXPORT_EXEMPT),
    ...Object.keys(ERASURE_DELETES),
    ...Object.keys(ERASURE_EXEMPT),
  ]
  for (const table of named) {
    assert.ok(table === 'users' || userTables.includes(table), `${table} holds a user's rows`)
  }
})

test('every sealed column (*_enc) is rotated by npm run rotate-keys', () => {
  const sealed = [...columnsOf].flatMap(([table, columns]) =>
    columns.filter((c) => c.endsWith('_enc')).map((c) => `${table}.${c}`),
  )
  assert.ok(sealed.length >= 3, JSON.stringify(sealed))
  assert.deepEqual(
    sealed.filter((c) => !(c in SEALED_COLUMNS)),
    [],
    'add the column to SEALED_COLUMNS (scripts/rotate-keys.ts)',
  )
  for (const name of Object.keys(SEALED_COLUMNS)) {
    const [table, column] = name.split('.')
    assert.ok(hasColumn(table, column), `${name} is a column`)
  }
})
