// POST /v1/{tenantSlug}/auth/refresh: rotation, reuse detection and race safety
// (SPEC, Refresh token family; CONTRACT §4). Runs on whatever DATABASE_URL names, so the
// race tests also run against PostgreSQL in CI.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditMark, auditSince, sessionRows, setUser, tenantSnapshot } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startServer,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { hashToken } from '../../lib/crypto.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const refresh = (refreshToken: unknown, slug = t.slug, options?: { ip?: string }) =>
  server.request('POST', `/v1/${slug}/auth/refresh`, { refreshToken }, options)
const me = (token: string, slug = t.slug) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })

describe('POST auth/refresh', () => {
  test('rotates: a new pair for the same session, the old refresh token spent', async () => {
    const u = await signup(server, t.slug)
    const res = await refresh(u.refreshToken)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body).sort(), [
      'accessToken',
      'accessTokenExpiresIn',
      'refreshToken',
      'refreshTokenExpiresIn',
      'user',
    ])
    assert.equal(res.body.accessTokenExpiresIn, 900)
    assert.equal(res.body.refreshTokenExpiresIn, 2592000)
    assert.notEqual(res.body.refreshToken, u.refreshToken)
    assert.notEqual(res.body.accessToken, u.accessToken)
    assert.equal(res.body.user.id, u.user.id)
    assert.equal(res.body.user.email, u.email)
    const claims = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))
    assert.equal(claims(res.body.accessToken).sid, claims(u.accessToken).sid, 'same session')
    assert.equal((await sessionRows(server, t.tenantId, u.user.id)).length, 1)
    assert.equal((await me(res.body.accessToken)).status, 200)

    // Only hashes are stored.
    const snapshot = await tenantSnapshot(server, t.tenantId)
    const hashes = snapshot.tokens.map((r) => r.tokenHash)
    assert.ok(hashes.includes(hashToken(res.body.refreshToken)))
    assert.ok(!JSON.stringify(snapshot).includes(res.body.refreshToken), 'never the token itself')

    // The successor rotates again, and so on down the chain.
    let current = res.body.refreshToken
    for (let i = 0; i < 4; i++) {
      const next = await refresh(current)
      assert.equal(next.status, 200)
      current = next.body.refreshToken
    }
  })

  test('the envelope shows the user as it is now', async () => {
    const u = await signup(server, t.slug)
    await setUser(server, t.tenantId, u.user.id, { emailVerified: true })
    const res = await refresh(u.refreshToken)
    assert.equal(res.status, 200)
    assert.equal(res.body.user.emailVerified, true)
  })

  test('rule: reuse of a rotated refresh token revokes the whole family', async () => {
    const u = await signup(server, t.slug)
    const other = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: u.password,
    })
    assert.equal(other.status, 200)
    const first = await refresh(u.refreshToken)
    const second = await refresh(first.body.refreshToken)
    assert.equal(second.status, 200)

    const mark = await auditMark(server, t.tenantId)
    // An attacker replays the first, already rotated token.
    const replay = await refresh(u.refreshToken, t.slug, { ip: '10.66.66.66' })
    expectError(replay, 401, 'refresh_token_reused')

    // Every token of the family is dead: the current refresh token and every access token.
    expectError(await refresh(second.body.refreshToken), 401, 'session_revoked')
    for (const token of [u.accessToken, first.body.accessToken, second.body.accessToken]) {
      expectError(await me(token), 401, 'session_revoked')
    }
    // Another session (family) of the same user lives on.
    assert.equal((await me(other.body.accessToken)).status, 200)
    assert.equal((await refresh(other.body.refreshToken)).status, 200)

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionFamilyCompromised', 'SessionRevoked'],
    )
    const sid = JSON.parse(Buffer.from(u.accessToken.split('.')[1], 'base64url').toString()).sid
    for (const e of events) {
      assert.equal(e.userId, u.user.id)
      assert.equal(e.metadata.sessionId, sid)
      assert.equal(e.ip, '10.66.66.66')
    }
    const sessions = await sessionRows(server, t.tenantId, u.user.id)
    const revoked = sessions.find((s) => s.id === sid)
    assert.ok(revoked?.revokedAt, 'the family is revoked in the database')
    assert.equal(revoked.revokeReason, 'reuse')

    // Replaying again answers the same and records nothing more.
    const again = await auditMark(server, t.tenantId)
    expectError(await refresh(u.refreshToken), 401, 'refresh_token_reused')
    expectError(await refresh(first.body.refreshToken), 401, 'refresh_token_reused')
    assert.deepEqual(await auditSince(server, t.tenantId, again), [])
  })

  test('rule: of 10 concurrent refreshes with one token exactly one succeeds', async () => {
    const u = await signup(server, t.slug)
    const mark = await auditMark(server, t.tenantId)
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(u.refreshToken)))
    const winners = results.filter((r) => r.status === 200)
    assert.equal(winners.length, 1, JSON.stringify(results.map((r) => r.status)))
    for (const r of results.filter((r) => r.status !== 200)) {
      expectError(r, 401, 'refresh_token_reused')
    }
    // The losers presented a rotated token: the family ends, the winner's pair with it.
    const winner = winners[0].body
    expectError(await refresh(winner.refreshToken), 401, 'session_revoked')
    expectError(await me(winner.accessToken), 401, 'session_revoked')
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionFamilyCompromised', 'SessionRevoked'],
      'the family is revoked once',
    )
    const snapshot = await tenantSnapshot(server, t.tenantId)
    const sid = JSON.parse(Buffer.from(u.accessToken.split('.')[1], 'base64url').toString()).sid
    assert.equal(
      snapshot.tokens.filter((r) => r.sessionId === sid).length,
      2,
      'one successor token was issued, not one per request',
    )
  })

  test('rule: concurrent refreshes of different sessions do not disturb each other', async () => {
    const users = await Promise.all(Array.from({ length: 5 }, () => signup(server, t.slug)))
    const results = await Promise.all(users.map((u) => refresh(u.refreshToken)))
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200, 200, 200, 200],
    )
    for (const r of results) assert.equal((await me(r.body.accessToken)).status, 200)
  })

  test('an unknown refresh token is 401 token_invalid and changes nothing', async () => {
    const before = await tenantSnapshot(server, t.tenantId)
    for (const token of ['x', 'not-a-real-refresh-token', 'A'.repeat(1024)]) {
      expectError(await refresh(token), 401, 'token_invalid')
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test("rule: another tenant's refresh token is refused and its session is left alone", async () => {
    const other = await createTenant(server)
    const u = await signup(server, other.slug)
    const beforeHere = await tenantSnapshot(server, t.tenantId)
    const beforeThere = await tenantSnapshot(server, other.tenantId)
    expectError(await refresh(u.refreshToken), 401, 'token_invalid')
    expectError(await refresh(other.admin.refreshToken), 401, 'token_invalid')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), beforeHere)
    assert.deepEqual(await tenantSnapshot(server, other.tenantId), beforeThere)
    // Still usable where it belongs.
    assert.equal((await refresh(u.refreshToken, other.slug)).status, 200)
  })

  test('a logged-out session cannot be refreshed', async () => {
    const u = await signup(server, t.slug)
    const out = await server.request('POST', `/v1/${t.slug}/auth/logout`, {
      refreshToken: u.refreshToken,
    })
    assert.equal(out.status, 200)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await refresh(u.refreshToken), 401, 'session_revoked')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a suspended or deleted user cannot refresh', async () => {
    const s = await signup(server, t.slug)
    await setUser(server, t.tenantId, s.user.id, { status: 'Suspended' })
    const res = await refresh(s.refreshToken)
    assert.equal(res.status, 401)
    assert.equal(res.body.code, 'UNAUTHORIZED')
    const d = await signup(server, t.slug)
    await setUser(server, t.tenantId, d.user.id, { deletedAt: new Date() })
    assert.equal((await refresh(d.refreshToken)).status, 401)
  })

  test('bad inputs are 400 validation and change nothing', async () => {
    const u = await signup(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    const path = `/v1/${t.slug}/auth/refresh`
    for (const body of [
      {},
      { refreshToken: '' },
      { refreshToken: 'r'.repeat(1025) },
      { refreshToken: 12345 },
      { refreshToken: [u.refreshToken] },
      { refreshToken: null },
      { refreshToken: { token: u.refreshToken } },
      { token: u.refreshToken },
    ]) {
      expectValidation(await server.request('POST', path, body), 'body.refreshToken')
    }
    expectValidation(await server.request('POST', path, undefined, { raw: '[]' }))
    expectError(
      await server.request('POST', path, undefined, { raw: `{"refreshToken":"${u.refreshToken}"` }),
      400,
      'malformed_json',
    )
    expectError(
      await server.request('POST', path, undefined, {
        raw: u.refreshToken,
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      'unsupported_media_type',
    )
    expectError(
      await server.request('POST', path, { refreshToken: u.refreshToken, pad: 'x'.repeat(70_000) }),
      400,
      'body_too_large',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    assert.equal((await refresh(u.refreshToken)).status, 200, 'the token was not spent')
  })

  test('an unknown tenant is 404', async () => {
    const u = await signup(server, t.slug)
    expectError(await refresh(u.refreshToken, 'no-such-tenant'), 404, 'tenant_not_found')
    assert.equal((await refresh(u.refreshToken)).status, 200, 'the token was not spent')
  })

  // These move the server's clock forward, so they run last.
  test('a refresh token lasts 30 days, and each rotation starts a new 30 days', async () => {
    const a = await signup(server, t.slug)
    const b = await signup(server, t.slug)
    server.clock.advance(20 * 24 * 3600)
    const rotated = await refresh(a.refreshToken)
    assert.equal(rotated.status, 200)
    server.clock.advance(10 * 24 * 3600 + 1)
    // b's token is now 30 days and 1 second old; a's successor only 10 days.
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await refresh(b.refreshToken), 401, 'token_expired')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    assert.equal((await refresh(rotated.body.refreshToken)).status, 200)
  })
})

describe('refresh rate limit (CONTRACT §6: 60 per minute per IP)', () => {
  let limited: TestServer
  let lt: TenantFixture
  before(async () => {
    limited = await startServer({
      limits: { ...GENEROUS_LIMITS, tokenEndpoints: { points: 3, seconds: 60 } },
    })
    lt = await createTenant(limited)
  })
  after(() => limited.close())

  test('rule: refreshes past the budget are 429 with Retry-After and spend nothing', async () => {
    const ip = randomIp()
    const u = await signup(limited, lt.slug)
    let token = u.refreshToken
    for (let i = 0; i < 3; i++) {
      const res = await limited.request(
        'POST',
        `/v1/${lt.slug}/auth/refresh`,
        { refreshToken: token },
        { ip },
      )
      assert.equal(res.status, 200)
      token = res.body.refreshToken
    }
    const before = await tenantSnapshot(limited, lt.tenantId)
    const held = await limited.request(
      'POST',
      `/v1/${lt.slug}/auth/refresh`,
      { refreshToken: token },
      { ip },
    )
    expectError(held, 429, 'rate_limited')
    assert.ok(Number(held.headers.get('retry-after')) <= 60)
    assert.deepEqual(await tenantSnapshot(limited, lt.tenantId), before, 'the token is not spent')
    const elsewhere = await limited.request(
      'POST',
      `/v1/${lt.slug}/auth/refresh`,
      { refreshToken: token },
      { ip: randomIp() },
    )
    assert.equal(elsewhere.status, 200, 'and still works from another client')
  })
})
