// POST auth/logout (one session) and POST auth/logout-all (every session of the user)
// (SPEC, Refresh token family; CONTRACT §4: revocation reaches access tokens).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditMark, auditSince, sessionRows, tenantSnapshot } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { apiKeys } from '../../db/schema.ts'
import { hashToken } from '../../lib/crypto.ts'
import { uuidv7 } from '../../lib/ids.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const me = (token: string, slug = t.slug) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })
const logout = (refreshToken: unknown, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/auth/logout`, { refreshToken })
const logoutAll = (token?: string, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/auth/logout-all`, undefined, { token })
const sid = (accessToken: string) =>
  JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8')).sid as string

/** Signs the same user in again: a second, independent session. */
async function loginAgain(u: { email: string; password: string }, slug = t.slug) {
  const res = await server.request('POST', `/v1/${slug}/auth/login`, {
    email: u.email,
    password: u.password,
  })
  assert.equal(res.status, 200)
  return res.body
}

describe('POST auth/logout', () => {
  test('ends that session only: its access and refresh tokens stop working', async () => {
    const u = await signup(server, t.slug)
    const other = await loginAgain(u)
    const mark = await auditMark(server, t.tenantId)
    const res = await logout(u.refreshToken)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })

    expectError(await me(u.accessToken), 401, 'session_revoked')
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/refresh`, { refreshToken: u.refreshToken }),
      401,
      'session_revoked',
    )
    assert.equal((await me(other.accessToken)).status, 200, 'the other session lives on')

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionRevoked', 'UserLogout'],
    )
    for (const e of events) {
      assert.equal(e.userId, u.user.id)
      assert.equal(e.metadata.sessionId, sid(u.accessToken))
    }
    const row = (await sessionRows(server, t.tenantId, u.user.id)).find(
      (s) => s.id === sid(u.accessToken),
    )
    assert.ok(row?.revokedAt)
    assert.equal(row.revokeReason, 'logout')
  })

  test('a rotated refresh token of the session logs it out too', async () => {
    const u = await signup(server, t.slug)
    const r = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: u.refreshToken,
    })
    assert.equal(r.status, 200)
    assert.equal((await logout(r.body.refreshToken)).status, 200)
    expectError(await me(r.body.accessToken), 401, 'session_revoked')
  })

  test('logging out twice answers ok and records nothing more', async () => {
    const u = await signup(server, t.slug)
    assert.equal((await logout(u.refreshToken)).status, 200)
    const before = await tenantSnapshot(server, t.tenantId)
    const again = await logout(u.refreshToken)
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, { ok: true })
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('an unknown refresh token answers ok and changes nothing (no oracle)', async () => {
    const before = await tenantSnapshot(server, t.tenantId)
    for (const token of ['unknown-token', 'z'.repeat(1024)]) {
      const res = await logout(token)
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { ok: true })
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test("rule: another tenant's refresh token cannot end that tenant's session", async () => {
    const other = await createTenant(server)
    const u = await signup(server, other.slug)
    const beforeThere = await tenantSnapshot(server, other.tenantId)
    const beforeHere = await tenantSnapshot(server, t.tenantId)
    const res = await logout(u.refreshToken)
    assert.equal(res.status, 200)
    assert.deepEqual(await tenantSnapshot(server, other.tenantId), beforeThere)
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), beforeHere)
    assert.equal((await me(u.accessToken, other.slug)).status, 200)
  })

  test('bad inputs are 400 validation and change nothing', async () => {
    const u = await signup(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    for (const body of [
      {},
      { refreshToken: '' },
      { refreshToken: 'r'.repeat(1025) },
      { refreshToken: 42 },
      { refreshToken: [u.refreshToken] },
      { refreshToken: null },
    ]) {
      expectValidation(
        await server.request('POST', `/v1/${t.slug}/auth/logout`, body),
        'body.refreshToken',
      )
    }
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/logout`, undefined, {
        raw: '{"refreshToken"',
      }),
      400,
      'malformed_json',
    )
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/logout`, undefined, {
        raw: u.refreshToken,
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      'unsupported_media_type',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    assert.equal((await me(u.accessToken)).status, 200)
  })

  test('an unknown tenant is 404', async () => {
    const u = await signup(server, t.slug)
    expectError(await logout(u.refreshToken, 'no-such-tenant'), 404, 'tenant_not_found')
    assert.equal((await me(u.accessToken)).status, 200)
  })
})

describe('POST auth/logout-all', () => {
  test('ends every session of the user and answers how many', async () => {
    const u = await signup(server, t.slug)
    const second = await loginAgain(u)
    const third = await loginAgain(u)
    const bystander = await signup(server, t.slug)
    const mark = await auditMark(server, t.tenantId)

    const res = await logoutAll(second.accessToken)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true, count: 3 })

    for (const s of [u, second, third]) {
      expectError(await me(s.accessToken), 401, 'session_revoked')
      expectError(
        await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
          refreshToken: s.refreshToken,
        }),
        401,
        'session_revoked',
      )
    }
    assert.equal((await me(bystander.accessToken)).status, 200, 'other users keep theirs')

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionRevoked', 'SessionRevoked', 'SessionRevoked', 'UserLogout'],
    )
    const logoutEvent = events.find((e) => e.action === 'UserLogout')!
    assert.deepEqual(logoutEvent.metadata, { all: true, count: 3 })
    assert.equal(logoutEvent.actorId, u.user.id)
    assert.deepEqual(
      events
        .filter((e) => e.action === 'SessionRevoked')
        .map((e) => e.metadata.sessionId)
        .sort(),
      [u, second, third].map((s) => sid(s.accessToken)).sort(),
    )

    // A new sign-in starts afresh.
    const fresh = await loginAgain(u)
    assert.equal((await me(fresh.accessToken)).status, 200)
  })

  test('sessions already ended are not counted again', async () => {
    const u = await signup(server, t.slug)
    const second = await loginAgain(u)
    assert.equal((await logout(u.refreshToken)).status, 200)
    const res = await logoutAll(second.accessToken)
    assert.deepEqual(res.body, { ok: true, count: 1 })
  })

  test('needs a live user access token', async () => {
    const u = await signup(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await logoutAll(), 401, 'token_missing')
    expectError(await logoutAll('garbage'), 401, 'token_invalid')
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, {
        headers: { authorization: `Basic ${u.accessToken}` },
      }),
      401,
      'token_invalid',
    )
    // A refresh token is not an access token.
    expectError(await logoutAll(u.refreshToken), 401, 'token_invalid')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)

    // After logging out, the same access token is refused.
    assert.equal((await logoutAll(u.accessToken)).status, 200)
    expectError(await logoutAll(u.accessToken), 401, 'session_revoked')
  })

  test('rule: a token of another tenant cannot log anyone out here', async () => {
    const other = await createTenant(server)
    const stranger = await signup(server, other.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    const beforeThere = await tenantSnapshot(server, other.tenantId)
    expectError(await logoutAll(stranger.accessToken), 401, 'token_invalid')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    assert.deepEqual(await tenantSnapshot(server, other.tenantId), beforeThere)
  })

  test('an API key cannot call logout-all (CONTRACT §4: a user token is needed)', async () => {
    const plaintext = `ak_live_${'k'.repeat(43)}`
    await server.deps.db.insert(apiKeys).values({
      tenantId: t.tenantId,
      id: uuidv7(),
      name: 'backend',
      environment: 'live',
      prefix: plaintext.slice(0, 12),
      keyHash: hashToken(plaintext),
      createdAt: new Date(),
    })
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await logoutAll(plaintext), 401, 'user_token_required')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('an unknown tenant is 404 before the token is looked at', async () => {
    const u = await signup(server, t.slug)
    expectError(await logoutAll(u.accessToken, 'no-such-tenant'), 404, 'tenant_not_found')
    expectError(await logoutAll(undefined, 'no-such-tenant'), 404, 'tenant_not_found')
    assert.equal((await me(u.accessToken)).status, 200)
  })
})
