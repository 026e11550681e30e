// The tenant purge (CONTRACT §9; npm run purge): a workspace closed more than
// USER_RETENTION_DAYS ago goes with every row of every table it owns, other workspaces keep
// every row, and its slug is free again.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { b64, png } from '../../../test/fixtures/logos.ts'
import { richUser } from '../../../test/fixtures/privacy.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { purgeTenant } from '../../db/cross-tenant.ts'
import { eq } from '../../db/orm.ts'
import { emailConflicts, oauthStates, webauthnChallenges } from '../../db/schema.ts'
import { randomToken } from '../../lib/crypto.ts'
import { purgeTenants } from './purge.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx, { userRetentionDays: 30 })
})

const DAY = 24 * 60 * 60

/** A tenant with rows in every table a tenant owns. */
async function populated(): Promise<TenantFixture> {
  const t = await createTenant(server)
  const u = await richUser(server, t.slug, t.tenantId)
  const key = await insertApiKey(server, t.tenantId)
  const put = await server.request(
    'PUT',
    `/v1/${t.slug}/tenant/logo`,
    { mimeType: 'image/png', data: b64(png()) },
    { token: key },
  )
  assert.equal(put.status, 200)
  const invited = await server.request(
    'POST',
    `/v1/${t.slug}/invites`,
    { email: uniqueEmail('invitee'), sendEmail: false },
    { token: key },
  )
  assert.equal(invited.status, 200)
  const now = server.clock.now()
  const soon = new Date(now.getTime() + 300_000)
  await server.deps.db.insert(oauthStates).values({
    tenantId: t.tenantId,
    stateHash: randomToken(),
    codeVerifier: 'sealed',
    nonce: randomToken(),
    createdAt: now,
    expiresAt: soon,
  })
  await server.deps.db.insert(webauthnChallenges).values({
    tenantId: t.tenantId,
    challengeHash: randomToken(),
    ceremony: 'registration',
    userId: u.userId,
    createdAt: now,
    expiresAt: soon,
  })
  await server.deps.db.insert(emailConflicts).values({
    tenantId: t.tenantId,
    userId: u.userId,
    emailNormalized: u.email,
    nfc: u.email,
  })
  return t
}

async function conflicts(tenantId: string) {
  return server.deps.db.select().from(emailConflicts).where(eq(emailConflicts.tenantId, tenantId))
}

test('purge: a tenant closed past the retention goes with every row; others keep theirs; the slug is free', async () => {
  const doomed = await populated()
  const kept = await populated()
  // Every table has rows of the doomed tenant: the check below cannot pass by accident.
  for (const [table, rows] of Object.entries(await tenantSnapshot(server, doomed.tenantId))) {
    assert.ok(rows.length > 0, `${table} has rows before the purge`)
  }
  const res = await server.request(
    'DELETE',
    `/v1/${doomed.slug}/tenant`,
    { confirmSlug: doomed.slug, password: doomed.adminPassword },
    { token: doomed.admin.accessToken },
  )
  assert.equal(res.status, 200)
  const keptBefore = await tenantSnapshot(server, kept.tenantId)
  const keptConflicts = await conflicts(kept.tenantId)

  // Within the retention period nothing goes.
  server.clock.advance(29 * DAY)
  assert.deepEqual(await purgeTenants(server.deps), [])
  assert.equal((await tenantSnapshot(server, doomed.tenantId)).tenant.length, 1)

  server.clock.advance(2 * DAY)
  const purged = await purgeTenants(server.deps)
  assert.deepEqual(
    purged.map((p) => [p.id, p.slug]),
    [[doomed.tenantId, doomed.slug]],
  )
  for (const [table, rows] of Object.entries(await tenantSnapshot(server, doomed.tenantId))) {
    assert.deepEqual(rows, [], `${table} of the purged tenant`)
  }
  assert.deepEqual(await conflicts(doomed.tenantId), [])
  assert.deepEqual(await tenantSnapshot(server, kept.tenantId), keptBefore)
  assert.deepEqual(await conflicts(kept.tenantId), keptConflicts)

  // The slug is free again.
  const again = await server.request('POST', '/v1/tenants', {
    tenant: { slug: doomed.slug, name: 'Second life' },
    admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
  })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.notEqual(again.body.user.tenantId, doomed.tenantId)
  // Nothing is left for a second run.
  assert.deepEqual(await purgeTenants(server.deps), [])
})

test('purge: a live tenant never loses a row, even named directly', async () => {
  const live = await populated()
  const before = await tenantSnapshot(server, live.tenantId)
  const far = new Date(server.clock.now().getTime() + 365 * DAY * 1000)
  assert.equal(await purgeTenant(server.deps.db, live.tenantId, far, 2), 0)
  assert.deepEqual(await tenantSnapshot(server, live.tenantId), before)
  assert.deepEqual(await purgeTenants(server.deps), [])
})

test('purge: a tenant is removed in bounded statements, however many rows it has', async () => {
  const t = await populated()
  await server.request(
    'DELETE',
    `/v1/${t.slug}/tenant`,
    { confirmSlug: t.slug, password: t.adminPassword },
    { token: t.admin.accessToken },
  )
  const cutoff = new Date(server.clock.now().getTime() + 1000)
  // Two rows per statement: every table takes several statements, and all rows still go.
  const removed = await purgeTenant(server.deps.db, t.tenantId, cutoff, 2)
  assert.ok(removed > 10, `${removed} rows`)
  for (const [table, rows] of Object.entries(await tenantSnapshot(server, t.tenantId))) {
    assert.deepEqual(rows, [], table)
  }
})
