// Migration 0002 (CONTRACT §8, emails in NFC): rows written before the rule, in NFD, are
// rewritten to NFC; live accounts whose addresses become one are reported in
// email_conflicts and left as they were, never merged. The migration runs here on a
// database brought to 0001, against rows written the old way (its tables as they were then:
// idp_identities went in 0027).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { PGlite } from '@electric-sql/pglite'
import { databaseBefore } from './fixtures/migrations.ts'

let db: PGlite
let migrate: () => Promise<void>
const tenantId = crypto.randomUUID()
before(async () => {
  ;({ db, migrate } = await databaseBefore('0002_email-nfc'))
  await db.query(
    `INSERT INTO tenants (id, slug, name, created_at, updated_at) VALUES ($1, 'acme', 'Acme', now(), now())`,
    [tenantId],
  )
})
after(() => db.close())

const tag = Math.random().toString(36).slice(2, 8)
const nfd = (local: string) => `${local}-${tag}@example.com`.normalize('NFD')

async function insertUser(email: string, deleted = false): Promise<string> {
  const id = crypto.randomUUID()
  const now = new Date()
  await db.query(
    `INSERT INTO users (tenant_id, id, email, email_normalized, status, role, created_at, updated_at, deleted_at)
     VALUES ($1, $2, $3, $4, 'Active', 'Member', $5, $5, $6)`,
    [tenantId, id, email, email.toLowerCase(), now, deleted ? now : null],
  )
  return id
}

async function user(id: string) {
  const { rows } = await db.query<{ email: string; normalized: string }>(
    'SELECT email, email_normalized AS normalized FROM users WHERE tenant_id = $1 AND id = $2',
    [tenantId, id],
  )
  return rows[0]
}

test('NFD rows become NFC; colliding live accounts are reported and left alone', async () => {
  const twinNfd = nfd('ren\u00e9')
  const twinNfc = twinNfd.normalize('NFC')
  const twinA = await insertUser(twinNfd)
  const twinB = await insertUser(twinNfc)
  const alone = await insertUser(nfd('Zo\u00eb'))
  const liveNfc = nfd('j\u00f6rg').normalize('NFC')
  await insertUser(liveNfc)
  const deletedTwin = await insertUser(nfd('j\u00f6rg'), true)
  const inviteId = crypto.randomUUID()
  const now = new Date()
  await db.query(
    `INSERT INTO invites (tenant_id, id, email, email_normalized, role, token_hash, created_at, expires_at)
     VALUES ($1, $2, $3, $4, 'Member', $5, $6, $7)`,
    [
      tenantId,
      inviteId,
      nfd('Andr\u00e9'),
      nfd('andr\u00e9'),
      `hash-${inviteId}`,
      now,
      new Date(now.getTime() + 86_400_000),
    ],
  )
  await db.query(
    `INSERT INTO idp_identities (tenant_id, issuer, subject, user_id, email, created_at)
     VALUES ($1, 'https://idp.example', 'sub-1', $2, $3, $4)`,
    [tenantId, alone, nfd('Zo\u00eb'), now],
  )

  await migrate()

  const reported = await db.query<{ user_id: string; email_normalized: string; nfc: string }>(
    'SELECT user_id, email_normalized, nfc FROM email_conflicts WHERE tenant_id = $1',
    [tenantId],
  )
  assert.deepEqual(
    reported.rows.map((r) => [r.user_id, r.email_normalized, r.nfc]).sort(),
    [
      [twinA, twinNfd, twinNfc],
      [twinB, twinNfc, twinNfc],
    ].sort(),
  )
  assert.deepEqual(await user(twinA), { email: twinNfd, normalized: twinNfd }, 'not merged')
  assert.deepEqual(await user(twinB), { email: twinNfc, normalized: twinNfc })
  const zoe = nfd('Zo\u00eb').normalize('NFC')
  assert.deepEqual(await user(alone), { email: zoe, normalized: zoe.toLowerCase() })
  const deleted = nfd('j\u00f6rg').normalize('NFC')
  assert.deepEqual(await user(deletedTwin), { email: deleted, normalized: deleted })
  const invite = await db.query<{ email: string; normalized: string }>(
    'SELECT email, email_normalized AS normalized FROM invites WHERE tenant_id = $1 AND id = $2',
    [tenantId, inviteId],
  )
  assert.deepEqual(invite.rows[0], {
    email: nfd('Andr\u00e9').normalize('NFC'),
    normalized: nfd('andr\u00e9').normalize('NFC'),
  })
  const identity = await db.query<{ email: string }>(
    'SELECT email FROM idp_identities WHERE tenant_id = $1',
    [tenantId],
  )
  assert.deepEqual(identity.rows, [{ email: zoe }])
})
