// Migration 0027 (CONTRACT §19, one identities table): the SPEC's identity provider's links
// (idp_identities) and the SSO connections' identities (sso_identities), written before the
// migration as the old code wrote them, are afterwards rows of `identities` (kind 'idp' with
// the issuer as source, kind 'sso' with the connection's id), each keeping its user, address
// and created_at and getting an id of its own; the old tables are gone.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { PGlite } from '@electric-sql/pglite'
import { databaseBefore } from './fixtures/migrations.ts'

let db: PGlite
let migrate: () => Promise<void>
before(async () => {
  ;({ db, migrate } = await databaseBefore('0027_identities'))
})
after(() => db.close())

const tenant = '0190e000-0000-7000-8000-000000000001'
const alice = '0190e000-0000-7000-8000-0000000000a1'
const bob = '0190e000-0000-7000-8000-0000000000b0'
const connection = '0190e000-0000-7000-8000-0000000000c1'
const idpIssuer = 'https://idp.example'

test('0027 copies every identity of both old tables into identities, then drops them', async () => {
  await db.query(
    `INSERT INTO tenants (id, slug, name, created_at, updated_at) VALUES ($1, 'acme', 'Acme', now(), now())`,
    [tenant],
  )
  for (const [id, email] of [
    [alice, 'alice@example.com'],
    [bob, 'bob@example.com'],
  ]) {
    await db.query(
      `INSERT INTO users (tenant_id, id, email, email_normalized, status, role, created_at, updated_at)
       VALUES ($1, $2, $3, $3, 'Active', 'Member', now(), now())`,
      [tenant, id, email],
    )
  }
  await db.query(
    `INSERT INTO sso_connections (tenant_id, id, name, type, domains, created_at, updated_at)
     VALUES ($1, $2, 'Corp', 'oidc', ARRAY['example.com'], now(), now())`,
    [tenant, connection],
  )
  // One subject at three sources: three identities, never one.
  const rows = [
    ['idp', idpIssuer, 'sub-1', alice, 'alice@example.com', '2025-01-02T03:04:05.678Z'],
    ['idp', 'https://other-idp.example', 'sub-1', bob, null, '2025-02-01T00:00:00.000Z'],
    ['sso', connection, 'sub-1', alice, 'alice@example.com', '2025-03-01T12:00:00.001Z'],
  ] as const
  for (const [kind, source, subject, user, email, created] of rows) {
    await db.query(
      kind === 'idp'
        ? `INSERT INTO idp_identities (tenant_id, issuer, subject, user_id, email, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`
        : `INSERT INTO sso_identities (tenant_id, connection_id, subject, user_id, email, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`,
      [tenant, source, subject, user, email, created],
    )
  }

  await migrate()

  const copied = await db.query<{
    id: string
    kind: string
    source: string
    subject: string
    user_id: string
    email: string | null
    created_at: Date
  }>(`SELECT * FROM identities WHERE tenant_id = $1 ORDER BY created_at`, [tenant])
  assert.deepEqual(
    copied.rows.map((r) => [
      r.kind,
      r.source,
      r.subject,
      r.user_id,
      r.email,
      r.created_at.toISOString(),
    ]),
    rows,
  )
  const ids = copied.rows.map((r) => r.id)
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-/)
  assert.equal(new Set(ids).size, ids.length, 'each identity has an id of its own')

  const gone = await db.query<{ idp: string | null; sso: string | null }>(
    `SELECT to_regclass('idp_identities')::text AS idp, to_regclass('sso_identities')::text AS sso`,
  )
  assert.deepEqual(gone.rows, [{ idp: null, sso: null }])

  // The identity's key is still unique, and its rows still go with their user.
  await assert.rejects(
    db.query(
      `INSERT INTO identities (tenant_id, kind, source, subject, user_id, created_at)
       VALUES ($1, 'sso', $2, 'sub-1', $3, now())`,
      [tenant, connection, bob],
    ),
    /identities_key/,
  )
  await db.query('DELETE FROM users WHERE tenant_id = $1 AND id = $2', [tenant, alice])
  const left = await db.query<{ user_id: string }>(
    'SELECT user_id FROM identities WHERE tenant_id = $1',
    [tenant],
  )
  assert.deepEqual(left.rows, [{ user_id: bob }])
})
