// DELETE users/{userId}: the soft delete and the last-admin rule (SPEC, Administration;
// CONTRACT §2, §3 last_admin, §4 revocation).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, setUser, unchanged, userRow } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { usersAdmin } from '../../../test/fixtures/users.ts'
import { signup, startTestServer, type TestServer } from '../../../test/helpers.ts'
import { uuidv7 } from '../../lib/ids.ts'

let server: TestServer
let h: ReturnType<typeof usersAdmin>
before(async (t) => {
  server = await startTestServer(t)
  h = usersAdmin(server)
})

test('DELETE user soft-deletes it: its sessions end, its address is free, UserSoftDeleted is recorded', async () => {
  const { t, admin, member } = await h.setup()
  const refresh = member.refreshToken
  const mark = await auditMark(server, t.tenantId)
  const res = await h.del(t, member.user.id, admin)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { ok: true })

  const row = await userRow(server, t.tenantId, member.user.id)
  assert.ok(row?.deletedAt instanceof Date, 'the row stays, marked deleted')
  assert.equal(await h.liveSessions(t.tenantId, member.user.id), 0)
  expectError(await h.me(t, member.accessToken), 401, 'session_revoked')
  const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
    refreshToken: refresh,
  })
  assert.equal(refreshed.status, 401)
  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => e.action),
    ['SessionRevoked', 'UserSoftDeleted'],
  )
  const deleted = events[1]
  assert.equal(deleted.userId, member.user.id)
  assert.equal(deleted.actorType, 'user')
  assert.equal(deleted.actorId, t.admin.user.id)
  assert.equal(deleted.email, member.email.toLowerCase())

  expectError(await h.login(t, member.email), 401, 'invalid_credentials')
  // The address is free: the same email signs up as a new user.
  const again = await signup(server, t.slug, member.email)
  assert.notEqual(again.user.id, member.user.id)
})

test('DELETE user: unknown, already deleted or foreign ids are 404 and change nothing; a malformed id is 400', async () => {
  const a = await h.setup()
  const b = await h.setup()
  assert.equal((await h.del(a.t, a.member.user.id, a.admin)).status, 200)
  await unchanged(server, [a.t.tenantId, b.t.tenantId], async () => {
    expectError(await h.del(a.t, uuidv7(), a.admin), 404, 'not_found')
    expectError(await h.del(a.t, a.member.user.id, a.admin), 404, 'not_found')
    expectError(await h.del(a.t, b.member.user.id, a.admin), 404, 'not_found')
    expectError(await h.del(a.t, b.adminId, a.admin), 404, 'not_found')
    expectValidation(await h.del(a.t, 'not-a-uuid', a.admin), 'params.userId')
    expectValidation(await h.del(a.t, `${b.member.user.id}x`, a.admin), 'params.userId')
  })
  assert.equal((await h.me(b.t, b.member.accessToken)).status, 200)
})

test('DELETE user: a Member gets 403, foreign credentials 401; nothing changes', async () => {
  const a = await h.setup()
  const b = await h.setup()
  const bKey = await insertApiKey(server, b.t.tenantId)
  const other = await signup(server, a.t.slug)
  await unchanged(server, [a.t.tenantId], async () => {
    expectError(await h.del(a.t, other.user.id, a.member.accessToken), 403, 'admin_required')
    expectError(await h.del(a.t, other.user.id, b.admin), 401, 'token_invalid')
    expectError(await h.del(a.t, other.user.id, bKey), 401, 'invalid_api_key')
    expectError(await h.del(a.t, other.user.id), 401, 'token_missing')
  })
})

test('last admin: the only active Admin cannot be deleted, by itself or by an API key', async () => {
  const { t, admin, adminId } = await h.setup()
  const key = await insertApiKey(server, t.tenantId)
  // A suspended admin does not count.
  const suspended = await signup(server, t.slug)
  await setUser(server, t.tenantId, suspended.user.id, { role: 'Admin', status: 'Suspended' })
  await unchanged(server, [t.tenantId], async () => {
    expectError(await h.del(t, adminId, admin), 403, 'last_admin')
    expectError(await h.del(t, adminId, key), 403, 'last_admin')
  })
  // With a second active admin, either may go.
  await setUser(server, t.tenantId, suspended.user.id, { status: 'Active' })
  assert.equal((await h.del(t, adminId, key)).status, 200)
  assert.deepEqual(await h.activeAdmins(t.tenantId), [suspended.user.id])
  expectError(await h.del(t, suspended.user.id, key), 403, 'last_admin')
})

test('last admin race: parallel deletions of every admin leave exactly one', async () => {
  const { t, adminId } = await h.setup()
  const key = await insertApiKey(server, t.tenantId)
  const others = await h.insertMembers(t.tenantId, 4)
  for (const id of others) await setUser(server, t.tenantId, id, { role: 'Admin' })
  const admins = [adminId, ...others]
  const results = await Promise.all(admins.map((id) => h.del(t, id, key)))
  const statuses = results.map((r) => r.status).sort()
  assert.deepEqual(statuses, [200, 200, 200, 200, 403])
  for (const r of results) if (r.status === 403) expectError(r, 403, 'last_admin')
  assert.equal((await h.activeAdmins(t.tenantId)).length, 1)
})

test('last admin race: two admins deleting each other at once leave one admin', async () => {
  const { t, admin, adminId } = await h.setup()
  const second = await signup(server, t.slug)
  await setUser(server, t.tenantId, second.user.id, { role: 'Admin' })
  const [one, two] = await Promise.all([
    h.del(t, second.user.id, admin),
    h.del(t, adminId, second.accessToken),
  ])
  assert.equal([one, two].filter((r) => r.status === 200).length, 1)
  const loser = one.status === 200 ? two : one
  assert.ok(loser.status === 403 || loser.status === 401, JSON.stringify(loser.body))
  assert.equal((await h.activeAdmins(t.tenantId)).length, 1)
})
