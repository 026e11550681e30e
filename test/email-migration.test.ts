// Migration 0002 (CONTRACT §8, emails in NFC): rows written before the rule, in NFD, are
// rewritten to NFC; live accounts whose addresses become one are reported in
// email_conflicts and left as they were, never merged. The migration's own statements run
// here against rows written the old way.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { and, eq, sql } from '../src/db/orm.ts'
import { emailConflicts, invites, users } from '../src/db/schema.ts'
import { createTenant, startServer, type TenantFixture, type TestServer } from './helpers.ts'

const MIGRATION = new URL('../src/db/migrations/0002_email-nfc.sql', import.meta.url)

let server: TestServer
let t: TenantFixture
before(async () => {
  server = await startServer()
  t = await createTenant(server)
})
after(async () => {
  await server.deps.db.delete(emailConflicts).where(eq(emailConflicts.tenantId, t.tenantId))
  await server.close()
})

const tag = Math.random().toString(36).slice(2, 8)
const nfd = (local: string) => `${local}-${tag}@example.com`.normalize('NFD')

async function insertUser(email: string, deleted = false): Promise<string> {
  const id = crypto.randomUUID()
  const now = new Date()
  await server.deps.db.insert(users).values({
    tenantId: t.tenantId,
    id,
    email,
    emailNormalized: email.toLowerCase(),
    status: 'Active',
    role: 'Member',
    createdAt: now,
    updatedAt: now,
    deletedAt: deleted ? now : null,
  })
  return id
}

async function user(id: string) {
  const [row] = await server.deps.db
    .select({ email: users.email, normalized: users.emailNormalized })
    .from(users)
    .where(and(eq(users.tenantId, t.tenantId), eq(users.id, id)))
  return row
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
  await server.deps.db.insert(invites).values({
    tenantId: t.tenantId,
    id: inviteId,
    email: nfd('Andr\u00e9'),
    emailNormalized: nfd('andr\u00e9'),
    role: 'Member',
    tokenHash: `hash-${inviteId}`,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 86_400_000),
  })

  const statements = readFileSync(MIGRATION, 'utf8').split('--> statement-breakpoint')
  assert.match(statements[0], /CREATE TABLE "email_conflicts"/)
  for (const statement of statements.slice(1)) await server.deps.db.execute(sql.raw(statement))

  const reported = await server.deps.db
    .select()
    .from(emailConflicts)
    .where(eq(emailConflicts.tenantId, t.tenantId))
  assert.deepEqual(
    reported.map((r) => [r.userId, r.emailNormalized, r.nfc]).sort(),
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
  const [invite] = await server.deps.db
    .select({ email: invites.email, normalized: invites.emailNormalized })
    .from(invites)
    .where(and(eq(invites.tenantId, t.tenantId), eq(invites.id, inviteId)))
  assert.deepEqual(invite, {
    email: nfd('Andr\u00e9').normalize('NFC'),
    normalized: nfd('andr\u00e9').normalize('NFC'),
  })
})
