// One owner per table: every table is written from one queries file of its module, and
// from nowhere else but db/cross-tenant.ts, where the queries that cross tenants on purpose
// (purge, key rotation, the invite lookup by token hash) are kept so that tenant isolation
// can be audited in one place. Writes are found as Drizzle calls (`.insert(users)`) and as
// SQL text (`UPDATE users`).
import assert from 'node:assert/strict'
import { globSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { getTableConfig, type PgTable } from '../src/db/orm.ts'
import * as schema from '../src/db/schema.ts'

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

test('every table is written from one queries file (and the cross-tenant file)', () => {
  const problems: string[] = []
  for (const [table, files] of writers()) {
    const owners = [...files].filter((f) => f !== CROSS_TENANT)
    if (owners.length > 1) problems.push(`${table} is written by ${owners.join(', ')}`)
    for (const file of owners) {
      if (!file.endsWith('/queries.ts')) problems.push(`${table} is written by ${file}`)
    }
  }
  assert.deepEqual(problems, [])
})
