// Sign-in failure budgets (CONTRACT §6): 10 failures per (tenant, email, IP) in 15 minutes,
// and a per-account cap across all IPs that a success resets. Counters are atomic.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditMark, auditSince, tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

const WRONG = 'definitely-not-it-42'

describe('per (tenant, email, IP): 10 failures in 15 minutes', () => {
  let server: TestServer
  let t: TenantFixture
  before(async () => {
    server = await startServer({
      limits: { ...GENEROUS_LIMITS, loginFailures: { points: 10, seconds: 900 } },
    })
    t = await createTenant(server)
  })
  after(() => server.close())

  const login = (email: string, password: string, ip: string) =>
    server.request('POST', `/v1/${t.slug}/auth/login`, { email, password }, { ip })

  test('rule: after 10 failures the right password gets 429 with Retry-After', async () => {
    const u = await signup(server, t.slug)
    const ip = randomIp()
    for (let i = 0; i < 10; i++) {
      expectError(await login(u.email, WRONG, ip), 401, 'invalid_credentials')
    }
    const before = await tenantSnapshot(server, t.tenantId)
    const held = await login(u.email, u.password, ip)
    expectError(held, 429, 'rate_limited')
    const retryAfter = Number(held.headers.get('retry-after'))
    assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`)
    expectError(await login(u.email, WRONG, ip), 429, 'rate_limited')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before, 'a held try changes nothing')

    // The budget is per IP and per address: another IP, or another address, is not held.
    assert.equal((await login(u.email, u.password, randomIp())).status, 200)
    const v = await signup(server, t.slug)
    assert.equal((await login(v.email, v.password, ip)).status, 200)
  })

  test('rule: successful logins do not use up the failure budget', async () => {
    const u = await signup(server, t.slug)
    const ip = randomIp()
    for (let i = 0; i < 15; i++) assert.equal((await login(u.email, u.password, ip)).status, 200)
    for (let i = 0; i < 9; i++)
      expectError(await login(u.email, WRONG, ip), 401, 'invalid_credentials')
    assert.equal((await login(u.email, u.password, ip)).status, 200)
  })

  test('rule: a burst of 50 parallel wrong passwords gets no more tries than the limit', async () => {
    const u = await signup(server, t.slug)
    const ip = randomIp()
    const mark = await auditMark(server, t.tenantId)
    const results = await Promise.all(Array.from({ length: 50 }, () => login(u.email, WRONG, ip)))
    const tried = results.filter((r) => r.status === 401)
    const held = results.filter((r) => r.status === 429)
    assert.equal(tried.length + held.length, 50, 'every answer is 401 or 429')
    assert.ok(tried.length <= 10, `${tried.length} passwords were tried`)
    assert.equal(tried.length, 10, 'the whole budget was usable')
    for (const r of tried) expectError(r, 401, 'invalid_credentials')
    for (const r of held) expectError(r, 429, 'rate_limited')
    const failures = (await auditSince(server, t.tenantId, mark)).filter(
      (e) => e.action === 'UserLoginFailed',
    )
    assert.equal(failures.length, tried.length, 'only tried passwords were checked')
    expectError(await login(u.email, u.password, ip), 429, 'rate_limited')
  })

  test('rule: unknown addresses are held the same way as real ones', async () => {
    const ghost = uniqueEmail('ghost')
    const ip = randomIp()
    for (let i = 0; i < 10; i++) {
      expectError(await login(ghost, WRONG, ip), 401, 'invalid_credentials')
    }
    expectError(await login(ghost, WRONG, ip), 429, 'rate_limited')
  })

  test('the budget belongs to one tenant', async () => {
    const other = await createTenant(server)
    const email = uniqueEmail('both')
    const here = await signup(server, t.slug, email)
    await signup(server, other.slug, email)
    const ip = randomIp()
    for (let i = 0; i < 10; i++) await login(email, WRONG, ip)
    expectError(await login(email, here.password, ip), 429, 'rate_limited')
    const there = await server.request(
      'POST',
      `/v1/${other.slug}/auth/login`,
      { email, password: here.password },
      { ip },
    )
    assert.equal(there.status, 200)
  })
})

describe('per account across IPs (CONTRACT §6; budget lowered to 5 here)', () => {
  let server: TestServer
  let t: TenantFixture
  before(async () => {
    server = await startServer({
      limits: { ...GENEROUS_LIMITS, accountFailures: { points: 5, seconds: 3600 } },
    })
    t = await createTenant(server)
  })
  after(() => server.close())

  const login = (email: string, password: string, ip = randomIp()) =>
    server.request('POST', `/v1/${t.slug}/auth/login`, { email, password }, { ip })

  test('rule: the account cap holds across IPs, even for the right password', async () => {
    const u = await signup(server, t.slug)
    for (let i = 0; i < 5; i++) {
      expectError(await login(u.email, WRONG), 401, 'invalid_credentials')
    }
    const before = await tenantSnapshot(server, t.tenantId)
    for (let i = 0; i < 3; i++) {
      const res = await login(u.email, u.password)
      expectError(res, 429, 'rate_limited')
      const retryAfter = Number(res.headers.get('retry-after'))
      assert.ok(retryAfter > 3000 && retryAfter <= 3600, `held for the hour: ${retryAfter}`)
    }
    // The refusal writes when the lock ends (CONTRACT §21 lockedUntil); nothing else changed.
    const after = await tenantSnapshot(server, t.tenantId)
    const held = after.users.find((row) => row.id === u.user.id)
    assert.ok(held?.lockedUntil, 'lockedUntil written')
    const ends = held.lockedUntil.getTime() - Date.now()
    assert.ok(ends > 3000_000 && ends <= 3600_000, `locked for the hour: ${ends}`)
    held.lockedUntil = null
    assert.deepEqual(after, before)
    // Other accounts are not held.
    const v = await signup(server, t.slug)
    assert.equal((await login(v.email, v.password)).status, 200)
  })

  test('rule: a success resets the account failure count', async () => {
    const u = await signup(server, t.slug)
    for (let i = 0; i < 4; i++) expectError(await login(u.email, WRONG), 401, 'invalid_credentials')
    assert.equal((await login(u.email, u.password)).status, 200)
    for (let i = 0; i < 4; i++) expectError(await login(u.email, WRONG), 401, 'invalid_credentials')
    assert.equal((await login(u.email, u.password)).status, 200, '8 failures, but never 5 in a row')
  })

  test('rule: a parallel burst from many IPs gets no more tries than the account cap', async () => {
    const u = await signup(server, t.slug)
    const results = await Promise.all(Array.from({ length: 30 }, () => login(u.email, WRONG)))
    const tried = results.filter((r) => r.status === 401).length
    assert.equal(tried, 5)
    assert.equal(results.filter((r) => r.status === 429).length, 25)
    expectError(await login(u.email, u.password), 429, 'rate_limited')
  })

  test('rule: wrong current passwords on PATCH /me/password count against the account', async () => {
    const u = await signup(server, t.slug)
    for (let i = 0; i < 5; i++) {
      const res = await server.request(
        'PATCH',
        `/v1/${t.slug}/me/password`,
        { currentPassword: WRONG, newPassword: 'a-brand-new-secret-7' },
        { token: u.accessToken, ip: randomIp() },
      )
      expectError(res, 401, 'invalid_credentials')
    }
    expectError(await login(u.email, u.password), 429, 'rate_limited')
    const change = await server.request(
      'PATCH',
      `/v1/${t.slug}/me/password`,
      { currentPassword: u.password, newPassword: 'a-brand-new-secret-7' },
      { token: u.accessToken },
    )
    expectError(change, 429, 'rate_limited')
  })
})

describe('per client address: first-factor failures across every email and tenant (CONTRACT §8)', () => {
  let server: TestServer
  let t: TenantFixture
  let other: TenantFixture
  before(async () => {
    server = await startServer({
      limits: { ...GENEROUS_LIMITS, loginFailuresPerIp: { points: 6, seconds: 3600 } },
    })
    t = await createTenant(server)
    other = await createTenant(server)
    for (const tenant of [t, other]) {
      const res = await server.request(
        'PATCH',
        `/v1/${tenant.slug}/tenant`,
        { authPolicy: 'PasswordAndPasswordless' },
        { token: tenant.admin.accessToken },
      )
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
  })
  after(() => server.close())

  const login = (slug: string, email: string, password: string, ip: string) =>
    server.request('POST', `/v1/${slug}/auth/login`, { email, password }, { ip })

  test('rule: spraying passwords, codes and invite tokens from one address is held at the budget', async () => {
    const ip = randomIp()
    const u = await signup(server, t.slug)
    // Six failures, each against another address, across two tenants and three factors.
    const failures = [
      () => login(t.slug, uniqueEmail(), WRONG, ip),
      () => login(other.slug, uniqueEmail(), WRONG, ip),
      () => login(t.slug, u.email, WRONG, ip),
      () =>
        server.request(
          'POST',
          `/v1/${t.slug}/auth/verify-login-code`,
          { email: uniqueEmail(), code: '123456' },
          { ip },
        ),
      () =>
        server.request(
          'POST',
          '/v1/invites/accept',
          { token: 'not-an-invite-token', password: 'plum-orbit-canvas-78' },
          { ip },
        ),
      () => login(other.slug, uniqueEmail(), WRONG, ip),
    ]
    for (const attempt of failures) {
      const res = await attempt()
      assert.equal(res.status, 401, JSON.stringify(res.body))
    }
    // Now every sign-in from the address is held, the right password of an account it
    // never tried included, and nothing is written for it.
    const v = await signup(server, other.slug)
    const mark = await auditMark(server, other.tenantId)
    const held = await login(other.slug, v.email, v.password, ip)
    expectError(held, 429, 'rate_limited')
    const retryAfter = Number(held.headers.get('retry-after'))
    assert.ok(retryAfter > 3000 && retryAfter <= 3600, `Retry-After ${retryAfter}`)
    assert.deepEqual(await auditSince(server, other.tenantId, mark), [])
    expectError(
      await server.request(
        'POST',
        '/v1/invites/accept',
        { token: 'another-token', password: 'plum-orbit-canvas-78' },
        { ip },
      ),
      429,
      'rate_limited',
    )
    // Another address is not held.
    assert.equal((await login(other.slug, v.email, v.password, randomIp())).status, 200)
  })

  test('rule: successes do not spend the budget', async () => {
    const ip = randomIp()
    const u = await signup(server, t.slug)
    for (let i = 0; i < 10; i++) {
      assert.equal((await login(t.slug, u.email, u.password, ip)).status, 200)
    }
    for (let i = 0; i < 5; i++) {
      expectError(await login(t.slug, uniqueEmail(), WRONG, ip), 401, 'invalid_credentials')
    }
    assert.equal((await login(t.slug, u.email, u.password, ip)).status, 200)
  })
})
