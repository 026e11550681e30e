// Lockout and unlock (CONTRACT §21, issue 32) over real HTTP: the account budget of §6
// (lowered to 3 here) spent, the user record shows lockedUntil and GET users?locked=true
// lists the user; POST users/{id}/unlock (users:write, an API key too) ends the lock at
// once, clears lockedUntil and is audited UserUnlocked; a successful sign-in clears a stored
// lock; refusals (a Member, a key without users:write, an unknown or malformed id, a bad
// filter) change nothing and leave the lock in place.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { users } from '../../db/schema.ts'

const WRONG = 'not-the-password-at-all-1'
let server: TestServer
before(async (t) => {
  server = await startTestServer(t, {
    limits: { ...GENEROUS_LIMITS, accountFailures: { points: 3, seconds: 3600 } },
  })
})

const login = (t: TenantFixture, email: string, password: string) =>
  server.request('POST', `/v1/${t.slug}/auth/login`, { email, password }, { ip: randomIp() })
const unlock = (t: TenantFixture, userId: string, token: string) =>
  server.request('POST', `/v1/${t.slug}/users/${userId}/unlock`, undefined, { token })
const list = (t: TenantFixture, query: string, token = t.admin.accessToken) =>
  server.request('GET', `/v1/${t.slug}/users${query}`, undefined, { token })

/** Spends the account budget: three wrong passwords, then the right one refused (429). */
async function lockOut(t: TenantFixture, u: { email: string; password: string }) {
  for (let i = 0; i < 3; i++) {
    expectError(await login(t, u.email, WRONG), 401, 'invalid_credentials')
  }
  expectError(await login(t, u.email, u.password), 429, 'rate_limited')
}

async function storedLock(userId: string) {
  const rows = await server.deps.db.select().from(users)
  return rows.find((r) => r.id === userId)?.lockedUntil ?? null
}

test('a spent account budget shows as lockedUntil and in ?locked=true; unlock lets the user in, audited', async () => {
  const t = await createTenant(server)
  const u = await signup(server, t.slug)
  const other = await signup(server, t.slug)
  await lockOut(t, u)
  const stored = await storedLock(u.user.id)
  assert.ok(stored, 'the refusal wrote the end of the lock')
  expectError(await login(t, u.email, u.password), 429, 'rate_limited')
  assert.deepEqual(await storedLock(u.user.id), stored, 'a further refusal does not rewrite it')

  const all = await list(t, '')
  assert.equal(all.status, 200, JSON.stringify(all.body))
  const shown = all.body.items.find((i: any) => i.id === u.user.id)
  const until = Date.parse(shown.lockedUntil)
  assert.ok(until > Date.now() + 3000_000 && until <= Date.now() + 3601_000, shown.lockedUntil)
  assert.equal(all.body.items.find((i: any) => i.id === other.user.id).lockedUntil, null)
  const locked = await list(t, '?locked=true')
  assert.equal(locked.status, 200)
  assert.deepEqual(
    locked.body.items.map((i: any) => i.id),
    [u.user.id],
  )
  assert.equal((await list(t, '?locked=false')).body.items.length, all.body.items.length)

  const res = await unlock(t, u.user.id, t.admin.accessToken)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.id, u.user.id)
  assert.equal(res.body.lockedUntil, null)
  assert.equal(await storedLock(u.user.id), null)
  assert.deepEqual((await list(t, '?locked=true')).body.items, [])
  assert.equal((await login(t, u.email, u.password)).status, 200, 'the lock ended at once')

  const audit = await server.request('GET', `/v1/${t.slug}/audit?action=UserUnlocked`, undefined, {
    token: t.admin.accessToken,
  })
  const events = audit.body.items.filter((e: any) => e.action === 'UserUnlocked')
  assert.equal(events.length, 1, JSON.stringify(audit.body))
  assert.equal(events[0].userId, u.user.id)
  assert.equal(events[0].actorId, t.admin.user.id)
  assert.deepEqual(events[0].metadata, { wasLocked: true })
})

test('a fresh budget after an unlock: three more failures lock again', async () => {
  const t = await createTenant(server)
  const u = await signup(server, t.slug)
  await lockOut(t, u)
  assert.equal((await unlock(t, u.user.id, t.admin.accessToken)).status, 200)
  await lockOut(t, u)
  assert.ok(await storedLock(u.user.id))
})

test('an API key with users:write unlocks; one with users:read only is refused', async () => {
  const t = await createTenant(server)
  const u = await signup(server, t.slug)
  await lockOut(t, u)
  const reader = await createKey(server, t.slug, t.admin.accessToken, {
    name: 'reader',
    environment: 'live',
    permissions: ['users:read'],
  })
  const before = await tenantSnapshot(server, t.tenantId)
  expectError(await unlock(t, u.user.id, reader.plaintext), 403, 'permission_required')
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), before, 'nothing changed')
  const writer = await createKey(server, t.slug, t.admin.accessToken, {
    name: 'writer',
    environment: 'live',
    permissions: ['users:write'],
  })
  const res = await unlock(t, u.user.id, writer.plaintext)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.lockedUntil, null)
  assert.equal((await login(t, u.email, u.password)).status, 200)
})

test('a successful sign-in clears a stored lock; a past one shows as null', async () => {
  const t = await createTenant(server)
  const u = await signup(server, t.slug)
  const { and, eq } = await import('../../db/orm.ts')
  const set = (lockedUntil: Date) =>
    server.deps.db
      .update(users)
      .set({ lockedUntil })
      .where(and(eq(users.tenantId, t.tenantId), eq(users.id, u.user.id)))
  await set(new Date(Date.now() - 1000))
  const listed = await list(t, '')
  assert.equal(listed.body.items.find((i: any) => i.id === u.user.id).lockedUntil, null)
  assert.deepEqual((await list(t, '?locked=true')).body.items, [], 'an ended lock is not listed')
  await set(new Date(Date.now() + 600_000))
  assert.equal((await list(t, '?locked=true')).body.items.length, 1)
  assert.equal((await login(t, u.email, u.password)).status, 200)
  assert.equal(await storedLock(u.user.id), null)
})

test('refusals change nothing and leave the lock: a Member, an unknown or malformed id, a bad filter', async () => {
  const t = await createTenant(server)
  const u = await signup(server, t.slug)
  const member = await signup(server, t.slug)
  const other = await createTenant(server)
  await lockOut(t, u)
  const before = await tenantSnapshot(server, t.tenantId)
  expectError(await unlock(t, u.user.id, member.accessToken), 403, 'admin_required')
  expectError(await unlock(t, u.user.id, undefined as unknown as string), 401, 'token_missing')
  expectError(
    await unlock(t, '018f0000-0000-7000-8000-000000000000', t.admin.accessToken),
    404,
    'not_found',
  )
  // Another tenant's admin does not reach this tenant's user.
  expectError(await unlock(other, u.user.id, other.admin.accessToken), 404, 'not_found')
  expectError(await unlock(t, 'not-a-uuid', t.admin.accessToken), 400, 'validation')
  expectError(await list(t, '?locked=maybe'), 400, 'validation')
  expectError(await list(t, '?locked=true', member.accessToken), 403, 'admin_required')
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), before, 'nothing changed')
  expectError(await login(t, u.email, u.password), 429, 'rate_limited')
  assert.equal((await list(t, '?locked=true')).body.items.length, 1)
})
