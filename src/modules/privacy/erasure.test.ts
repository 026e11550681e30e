// POST users/{userId}/erase (CONTRACT §9): the user and its data deleted at once, its
// access tokens refused on every instance, its audit rows kept without the address, ip or
// user agent, pending invitations to the address revoked, the address free again.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { auditRows, setUser, tenantSnapshot, unchanged, userRow } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { insertPendingUser } from '../../../test/fixtures/invites.ts'
import { countRows, richUser, sidOf, USER_TABLES } from '../../../test/fixtures/privacy.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startSecondInstance,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { emailConflicts, invites, webauthnChallenges } from '../../db/schema.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { settleMs } from './erasure.ts'

let server: TestServer
let second: Awaited<ReturnType<typeof startSecondInstance>>
before(async (ctx) => {
  server = await startTestServer(ctx)
  second = await startSecondInstance(server)
})
after(() => second.close())

const erase = (t: TenantFixture, userId: string, token?: string) =>
  server.request('POST', `/v1/${t.slug}/users/${userId}/erase`, undefined, { token })
const login = (t: TenantFixture, email: string, password = STRONG_PASSWORD) =>
  server.request('POST', `/v1/${t.slug}/auth/login`, { email, password })

/** Every audit row of the tenant, as JSON, lower-cased: where an address might hide. */
async function auditText(tenantId: string) {
  return JSON.stringify(await auditRows(server, tenantId)).toLowerCase()
}

test('erase: the user and every row of it are deleted at once; its audit rows stay, scrubbed', async () => {
  const t = await createTenant(server)
  // The address failed to sign in before the account existed: a row naming only the email.
  const email = uniqueEmail('erased')
  const early = await login(t, email, 'not-the-password')
  expectError(early, 401, 'invalid_credentials')
  const u = await richUser(server, t.slug, t.tenantId, email)
  // A passkey registration in flight, and the migration 0002 report naming the user: rows
  // no foreign key from users reaches, written as their owners write them.
  const now = server.clock.now()
  await server.deps.db.insert(webauthnChallenges).values({
    tenantId: t.tenantId,
    challengeHash: uuidv7(now.getTime()),
    ceremony: 'registration',
    userId: u.userId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 300_000),
  })
  await server.deps.db.insert(emailConflicts).values({
    tenantId: t.tenantId,
    userId: u.userId,
    emailNormalized: email,
    nfc: email,
  })
  expectError(await login(t, email.toUpperCase(), 'wrong-password-1'), 401, 'invalid_credentials')
  // An admin acted on the user (its address in the event), and the user acted as an admin.
  await setUser(server, t.tenantId, u.userId, { role: 'Admin' })
  const invited = await server.request(
    'POST',
    `/v1/${t.slug}/invites`,
    { email: uniqueEmail('colleague'), sendEmail: false },
    { token: (await login(t, email)).body.accessToken },
  )
  assert.equal(invited.status, 200)
  // Someone whose address merely contains the erased one keeps it.
  const lookalike = await signup(server, t.slug, `x.${email}`)
  const before = await auditRows(server, t.tenantId)
  const aboutBefore = before.filter(
    (e) => e.userId === u.userId || e.actorId === u.userId || e.email === email,
  )
  // A row in every table that holds the user's data: each check below can fail.
  for (const table of USER_TABLES) {
    assert.ok((await countRows(server, table, t.tenantId, u.userId)) > 0, table)
  }
  // Another tenant with an account of the same address is not touched.
  const other = await createTenant(server)
  await signup(server, other.slug, email)
  const otherBefore = await tenantSnapshot(server, other.tenantId)

  assert.equal(
    (await second.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })).status,
    200,
  )
  const res = await erase(t, u.userId, t.admin.accessToken)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, { ok: true })

  // Gone, with every row that held its data.
  assert.equal(await userRow(server, t.tenantId, u.userId), undefined)
  for (const table of USER_TABLES) {
    assert.equal(await countRows(server, table, t.tenantId, u.userId), 0, table)
  }
  // Its tokens: refused here and on the other instance (the revocation outlived the rows).
  for (const token of [u.accessToken, u.second.accessToken]) {
    assert.ok(second.deps.revocations.has(sidOf(token)), 'the other instance heard of it')
    expectError(
      await second.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, { token }),
      401,
      'session_revoked',
    )
    expectError(
      await server.request('GET', `/v1/${t.slug}/me`, undefined, { token }),
      401,
      'session_revoked',
    )
  }
  expectError(
    await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: u.second.refreshToken,
    }),
    401,
    'token_invalid',
  )

  // The audit rows stay, with their action and time, but nothing names the address.
  const afterRows = await auditRows(server, t.tenantId)
  const byId = new Map(afterRows.map((e) => [e.id, e]))
  for (const e of aboutBefore) {
    const kept = byId.get(e.id)
    assert.ok(kept, `${e.action} kept`)
    assert.equal(kept.action, e.action)
    assert.deepEqual(kept.createdAt, e.createdAt)
    assert.equal(kept.actorType, e.actorType)
    assert.equal(kept.ip, null, `${e.action}: ip`)
    assert.equal(kept.userAgent, null, `${e.action}: userAgent`)
  }
  const text = await auditText(t.tenantId)
  assert.equal(text.replaceAll(`x.${email}`, '').includes(email), false, 'the address is gone')
  assert.ok(text.includes(`x.${email}`), "the look-alike's address is not touched")
  const failed = afterRows.filter((e) => e.action === 'UserLoginFailed')
  assert.equal(failed.length, 2)
  for (const e of failed) {
    assert.equal(e.email, null)
    assert.equal(e.metadata.email, undefined)
    assert.equal(e.metadata.reason, 'invalid_credentials')
  }
  // The invitation the user made keeps the invitee's address; only the actor's ip went.
  const inviteRow = afterRows.find((e) => e.action === 'InviteCreated')
  assert.ok(inviteRow?.email?.startsWith('colleague-'))
  assert.equal(inviteRow?.ip, null)

  // The erasure's own records name the user by id only.
  const requested = afterRows.filter((e) => e.action === 'GdprErasureRequested')
  const completed = afterRows.filter((e) => e.action === 'GdprErasureCompleted')
  assert.equal(requested.length, 1)
  assert.equal(completed.length, 1)
  for (const e of [...requested, ...completed]) {
    assert.equal(e.userId, u.userId)
    assert.equal(e.email, null)
    assert.equal(e.actorId, t.admin.user.id)
    assert.notEqual(e.ip, null, "the admin's address stays on the erasure's record")
  }
  assert.ok((completed[0].metadata.auditEventsScrubbed as number) >= aboutBefore.length)
  const revoked = afterRows.filter(
    (e) => e.action === 'SessionRevoked' && e.metadata.reason === 'erased',
  )
  // Its three sessions: signed up, signed in from elsewhere, signed in to invite.
  assert.equal(revoked.length, 3)

  // Other tenants: untouched; the look-alike still signs in.
  assert.deepEqual(await tenantSnapshot(server, other.tenantId), otherBefore)
  assert.equal((await login(t, lookalike.email)).status, 200)

  // The address may sign up again, as a new account.
  const again = await signup(server, t.slug, email)
  assert.notEqual(again.user.id, u.userId)
})

test('erase: pending invitations to the address are revoked, by id only in the audit', async () => {
  const t = await createTenant(server)
  const email = uniqueEmail('pending')
  const pendingId = await insertPendingUser(server, t.tenantId, email)
  const invited = await server.request(
    'POST',
    `/v1/${t.slug}/invites`,
    { email, sendEmail: false },
    { token: t.admin.accessToken },
  )
  assert.equal(invited.status, 200, JSON.stringify(invited.body))
  const inviteId = invited.body.invite.id
  const res = await erase(t, pendingId, t.admin.accessToken)
  assert.equal(res.status, 200)
  const [row] = await server.deps.db
    .select()
    .from(invites)
    .where(and(eq(invites.tenantId, t.tenantId), eq(invites.id, inviteId)))
  assert.ok(row.revokedAt instanceof Date)
  expectError(
    await server.request('POST', '/v1/invites/accept', {
      token: invited.body.token,
      password: STRONG_PASSWORD,
    }),
    401,
    'invalid_invite',
  )
  const revoked = (await auditRows(server, t.tenantId, 'InviteRevoked')).at(-1)
  assert.equal(revoked?.metadata.inviteId, inviteId)
  assert.equal(revoked?.metadata.reason, 'erasure')
  assert.equal((await auditText(t.tenantId)).includes(email), false)
})

test('erase: a soft-deleted user can be erased; an API key may erase', async (ctx) => {
  const t = await createTenant(server)
  const key = await insertApiKey(server, t.tenantId)
  const u = await signup(server, t.slug)
  const del = await server.request('DELETE', `/v1/${t.slug}/users/${u.user.id}`, undefined, {
    token: t.admin.accessToken,
  })
  assert.equal(del.status, 200)
  assert.ok((await userRow(server, t.tenantId, u.user.id))?.deletedAt)
  // No session was live: nothing to wait for. Erased through an instance whose wait for the
  // revocation feed would be 20.5 s (two 10 s polls and the margin), so an answer well
  // before that cannot have waited, however busy the machine.
  const patient = await startSecondInstance(server, { revocationPollMs: 10_000 })
  ctx.after(() => patient.close())
  const started = Date.now()
  const res = await patient.request('POST', `/v1/${t.slug}/users/${u.user.id}/erase`, undefined, {
    token: key,
  })
  assert.equal(res.status, 200)
  const took = Date.now() - started
  assert.ok(took < settleMs(patient.deps.config) / 2, `answered after ${took} ms: it waited`)
  assert.equal(await userRow(server, t.tenantId, u.user.id), undefined)
  assert.equal(await countRows(server, 'sessions', t.tenantId, u.user.id), 0)
  const done = (await auditRows(server, t.tenantId, 'GdprErasureCompleted')).at(-1)
  assert.equal(done?.actorType, 'apiKey')
  assert.equal((await auditText(t.tenantId)).includes(u.email), false)
  // Erased already: unknown now.
  expectError(await erase(t, u.user.id, key), 404, 'not_found')
})

test('erase: the last active Admin is refused (403 last_admin) and nothing changes', async () => {
  const t = await createTenant(server)
  const key = await insertApiKey(server, t.tenantId)
  await unchanged(server, t.tenantId, async () => {
    expectError(await erase(t, t.admin.user.id, key), 403, 'last_admin')
    expectError(await erase(t, t.admin.user.id, t.admin.accessToken), 403, 'last_admin')
  })
  // With a second admin, the first may be erased, by itself even.
  const other = await signup(server, t.slug)
  await setUser(server, t.tenantId, other.user.id, { role: 'Admin' })
  assert.equal((await erase(t, t.admin.user.id, t.admin.accessToken)).status, 200)
  assert.equal(await userRow(server, t.tenantId, t.admin.user.id), undefined)
  expectError(await erase(t, other.user.id, key), 403, 'last_admin')
})

test("erase: unknown, other tenant's and malformed ids, Members and foreign credentials change nothing", async () => {
  const a = await createTenant(server)
  const b = await createTenant(server)
  const member = await signup(server, a.slug)
  const bUser = await signup(server, b.slug)
  const bKey = await insertApiKey(server, b.tenantId)
  await unchanged(server, [a.tenantId, b.tenantId], async () => {
    expectError(await erase(a, uuidv7(), a.admin.accessToken), 404, 'not_found')
    expectError(await erase(a, bUser.user.id, a.admin.accessToken), 404, 'not_found')
    expectError(await erase(a, b.admin.user.id, a.admin.accessToken), 404, 'not_found')
    expectValidation(await erase(a, 'not-a-uuid', a.admin.accessToken), 'params.userId')
    expectValidation(await erase(a, `${member.user.id}x`, a.admin.accessToken), 'params.userId')
    expectError(await erase(a, member.user.id, member.accessToken), 403, 'admin_required')
    expectError(await erase(a, member.user.id, b.admin.accessToken), 401, 'token_invalid')
    expectError(await erase(a, member.user.id, bKey), 401, 'invalid_api_key')
    expectError(await erase(a, member.user.id), 401, 'token_missing')
    expectError(
      await server.request('POST', `/v1/${a.slug}/users/${member.user.id}/erase`, undefined, {
        token: a.admin.accessToken,
        raw: '{"confirm":',
      }),
      400,
      'malformed_json',
    )
    expectError(
      await server.request('POST', `/v1/no-such-tenant/users/${member.user.id}/erase`, undefined, {
        token: a.admin.accessToken,
      }),
      404,
      'tenant_not_found',
    )
  })
})

test('erase race: two erasures of one user at once both answer ok, and it is gone', async () => {
  const t = await createTenant(server)
  const u = await signup(server, t.slug)
  const results = await Promise.all([
    erase(t, u.user.id, t.admin.accessToken),
    erase(t, u.user.id, t.admin.accessToken),
  ])
  for (const r of results) assert.ok(r.status === 200 || r.status === 404, JSON.stringify(r.body))
  assert.ok(results.some((r) => r.status === 200))
  assert.equal(await userRow(server, t.tenantId, u.user.id), undefined)
  assert.equal((await auditRows(server, t.tenantId, 'GdprErasureCompleted')).length, 1)
})
