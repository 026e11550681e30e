// npm run import (scripts/import.ts, CONTRACT §14) against a real server: one small export
// of each source, in its system's own layout (test/fixtures/import/generate.ts), imported,
// signed in with, and imported again, which skips everything.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { before, test } from 'node:test'
import { userByEmail } from '../../../test/db.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  randomIp,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

const FIXTURES = new URL('../../../test/fixtures/import/', import.meta.url)
const file = (name: string) => new URL(name, FIXTURES).pathname
const CASES = JSON.parse(readFileSync(file('hashes.json'), 'utf8')).cases as {
  format: string
  password: string
}[]
const password = (format: string) => CASES.find((c) => c.format === format)?.password as string

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

function runImport(t: TenantFixture, apiKey: string, args: string[]) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      ['scripts/import.ts', '--tenant', t.slug, '--url', server.url, ...args],
      { env: { ...process.env, IMPORT_API_KEY: apiKey } },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

const login = (t: TenantFixture, email: string, pass: string) =>
  server.request('POST', `/v1/${t.slug}/auth/login`, { email, password: pass }, { ip: randomIp() })

const SOURCES = [
  {
    name: 'auth0',
    args: ['--from', 'auth0', file('auth0-users.ndjson'), '--hashes', file('auth0-hashes.ndjson')],
    summary: '3 read: 3 created, 0 updated, 0 skipped, 0 errors',
    again: '3 read: 0 created, 0 updated, 3 skipped, 0 errors (exists 3)',
    code: 0,
    signIn: ['ada@auth0.example', password('bcrypt-2b')],
    profile: ['ada@auth0.example', { displayName: 'Ada Lovelace', externalId: 'auth0|5f1a' }],
  },
  {
    name: 'supabase',
    args: ['--from', 'supabase', file('supabase-users.csv')],
    summary: '4 read: 3 created, 0 updated, 0 skipped, 1 errors (invalid_email 1)',
    again: '4 read: 0 created, 0 updated, 3 skipped, 1 errors (exists 3, invalid_email 1)',
    code: 1,
    problem: 'record 4: invalid_email',
    signIn: ['grace@supabase.example', password('bcrypt-2y')],
    profile: ['grace@supabase.example', { displayName: 'Grace "Amazing" Hopper' }],
  },
  {
    name: 'firebase',
    args: [
      '--from',
      'firebase',
      file('firebase-users.json'),
      '--hash-config',
      file('firebase-hash-config.json'),
    ],
    summary: '3 read: 2 created, 0 updated, 1 skipped, 0 errors (no_email 1)',
    again: '3 read: 0 created, 0 updated, 3 skipped, 0 errors (no_email 1, exists 2)',
    code: 0,
    signIn: ['ada@firebase.example', password('firebase-scrypt')],
    profile: ['grace@firebase.example', { status: 'Suspended', externalId: 'fb-grace' }],
  },
  {
    name: 'csv',
    args: ['--from', 'csv', file('users.csv')],
    summary: '3 read: 2 created, 0 updated, 0 skipped, 1 errors (hash_too_expensive 1)',
    again: '3 read: 0 created, 0 updated, 2 skipped, 1 errors (exists 2, hash_too_expensive 1)',
    code: 1,
    signIn: ['grace@csv.example', password('passlib-scrypt')],
    profile: ['ada@csv.example', { displayName: 'Lovelace, Ada', givenName: 'Ada' }],
  },
] as const

for (const source of SOURCES) {
  test(`npm run import --from ${source.name}: imports, signs in, and a re-run skips everything`, async () => {
    const t = await createTenant(server)
    const { plaintext } = await createKey(server, t.slug, t.admin.accessToken)
    const first = await runImport(t, plaintext, [...source.args])
    assert.equal(first.code, source.code, first.err)
    assert.match(
      first.out,
      new RegExp(`^${escapeRegExp(source.summary)} in [\\d.]+ s\\n$`),
      first.err,
    )
    if ('problem' in source) assert.ok(first.err.includes(source.problem), first.err)

    const [email, pass] = source.signIn
    const ok = await login(t, email, pass)
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    const [who, fields] = source.profile
    const row = (await userByEmail(server, t.tenantId, who)) as Record<string, unknown>
    for (const [name, value] of Object.entries(fields)) assert.equal(row[name], value, name)

    const again = await runImport(t, plaintext, [...source.args])
    assert.equal(again.code, source.code, again.err)
    assert.match(again.out, new RegExp(`^${escapeRegExp(source.again)} in [\\d.]+ s\\n$`))
  })
}

test('npm run import: a usage line for missing arguments, and the service refusing the key is an error', async () => {
  const t = await createTenant(server)
  const usage = await runImport(t, 'x', ['--from', 'ldap', file('users.csv')])
  assert.equal(usage.code, 2)
  assert.match(usage.err, /^usage: npm run import/)
  const refused = await runImport(t, 'ak_live_not-a-key', ['--from', 'csv', file('users.csv')])
  assert.equal(refused.code, 1)
  assert.match(refused.err, /the service answered 401/)
  assert.equal(await userByEmail(server, t.tenantId, 'ada@csv.example'), undefined)
})

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
