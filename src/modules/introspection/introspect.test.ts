// POST /v1/{tenantSlug}/oauth/introspect (RFC 7662; CONTRACT §10): an API key of the tenant
// asks whether an access token is active. Active answers carry exactly the token's claims
// but the role, which is the user's current one (CONTRACT §16);
// every other token (expired, revoked, logged out, another tenant's, badly signed, not a
// JWT at all) answers exactly `{ active: false }`. The caller must be an API key of this
// tenant (a user's token: 401 invalid_api_key), within the administration budget.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, describe, test } from 'node:test'
import { setUser, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { decodePart, privateKeyPem } from '../../../test/fixtures/signing-keys.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq, sql } from '../../db/orm.ts'
import { sessions } from '../../db/schema.ts'

const INACTIVE = { active: false }

let server: TestServer
let t: TenantFixture
let key: string
let other: TenantFixture
let otherKey: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  key = await insertApiKey(server, t.tenantId)
  other = await createTenant(server)
  otherKey = await insertApiKey(server, other.tenantId)
})

function introspect(
  on: Pick<TestServer, 'request'>,
  slug: string,
  credential: string | undefined,
  body: unknown,
  raw?: string,
) {
  return on.request('POST', `/v1/${slug}/oauth/introspect`, body, { token: credential, raw })
}

/** The answer for `token`, asked with this tenant's key; it must be a 200. */
async function state(token: unknown, on: TestServer = server, slug = t.slug, apiKey = key) {
  const res = await introspect(on, slug, apiKey, { token })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.headers.get('cache-control'), 'no-store')
  return res.body
}

describe('active tokens', () => {
  test('an active token answers exactly its claims', async () => {
    const u = await signup(server, t.slug)
    const claims = decodePart(u.accessToken, 1)
    assert.deepEqual(await state(u.accessToken), {
      active: true,
      sub: u.user.id,
      tid: t.tenantId,
      role: 'Member',
      sid: claims.sid,
      iat: claims.iat,
      exp: claims.exp,
      iss: 'http://auth.test',
    })
    const admin = await state(t.admin.accessToken)
    assert.equal(admin.active, true)
    assert.equal(admin.role, 'Admin')
  })

  test('a test-environment key may introspect too', async () => {
    const testKey = await insertApiKey(server, t.tenantId, { environment: 'test' })
    assert.equal((await state(t.admin.accessToken, server, t.slug, testKey)).active, true)
  })

  test('an ES256 token is introspected alike', async (ctx) => {
    const es = await startTestServer(ctx, {
      jwtAlg: 'ES256',
      jwtPrivateKeys: [privateKeyPem('ES256')],
    })
    const tenant = await createTenant(es)
    const esKey = await insertApiKey(es, tenant.tenantId)
    const body = await state(tenant.admin.accessToken, es, tenant.slug, esKey)
    assert.equal(body.active, true)
    assert.equal(body.tid, tenant.tenantId)
    // The HS256 server's token means nothing to it.
    assert.deepEqual(await state(t.admin.accessToken, es, tenant.slug, esKey), INACTIVE)
  })
})

describe('inactive tokens answer exactly { active: false }', () => {
  test('rule: a token past its expiry (the service clock) is inactive', async (ctx) => {
    const own = await startTestServer(ctx)
    const tenant = await createTenant(own)
    const ownKey = await insertApiKey(own, tenant.tenantId)
    const token = tenant.admin.accessToken
    own.clock.advance(899)
    assert.equal((await state(token, own, tenant.slug, ownKey)).active, true)
    own.clock.advance(2)
    assert.deepEqual(await state(token, own, tenant.slug, ownKey), INACTIVE)
  })

  test('rule: a token whose exp has passed in real time is inactive', async () => {
    const u = await signup(server, t.slug)
    const c = decodePart(u.accessToken, 1)
    const old = server.deps.tokens.issue(
      { sub: c.sub, tid: c.tid, role: c.role, sid: c.sid, jti: randomUUID() },
      new Date(Date.now() - 3_600_000),
    )
    assert.deepEqual(await state(old), INACTIVE)
  })

  test('rule: the token of a logged-out session is inactive', async () => {
    const u = await signup(server, t.slug)
    assert.equal((await state(u.accessToken)).active, true)
    const out = await server.request('POST', `/v1/${t.slug}/auth/logout`, {
      refreshToken: u.refreshToken,
    })
    assert.equal(out.status, 200)
    assert.deepEqual(await state(u.accessToken), INACTIVE)
  })

  test('rule: after logout-all every session’s token is inactive', async () => {
    const u = await signup(server, t.slug)
    const second = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: u.password,
    })
    const res = await server.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, {
      token: u.accessToken,
    })
    assert.equal(res.status, 200)
    assert.deepEqual(await state(u.accessToken), INACTIVE)
    assert.deepEqual(await state(second.body.accessToken), INACTIVE)
  })

  test('rule: a session revoked in the database is inactive before this instance hears of it', async () => {
    const u = await signup(server, t.slug)
    const { sid } = decodePart(u.accessToken, 1)
    // As another instance would revoke it: the row only, not this instance's cache.
    await server.deps.db
      .update(sessions)
      .set({ revokedAt: sql`clock_timestamp()`, revokeReason: 'test' })
      .where(and(eq(sessions.tenantId, t.tenantId), eq(sessions.id, sid)))
    assert.equal(server.deps.revocations.has(sid), false, 'the cache does not know yet')
    assert.deepEqual(await state(u.accessToken), INACTIVE)
  })

  test('rule: the token of a deleted user is inactive', async () => {
    const u = await signup(server, t.slug)
    const res = await server.request('DELETE', `/v1/${t.slug}/me`, undefined, {
      token: u.accessToken,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(await state(u.accessToken), INACTIVE)
  })

  test('rule: introspection answers the current role, and a suspended user is inactive', async () => {
    const u = await signup(server, t.slug)
    const patch = (changes: object) =>
      server.request('PATCH', `/v1/${t.slug}/users/${u.user.id}`, changes, {
        token: t.admin.accessToken,
      })
    assert.equal((await patch({ role: 'Admin' })).status, 200)
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: u.password,
    })
    assert.equal(login.status, 200, JSON.stringify(login.body))
    const token = login.body.accessToken
    assert.equal(decodePart(token, 1).role, 'Admin')
    assert.equal((await state(token)).role, 'Admin')

    // Demoted: the token still says Admin for up to 15 minutes; introspection does not.
    assert.equal((await patch({ role: 'Member' })).status, 200)
    const demoted = await state(token)
    assert.equal(demoted.active, true)
    assert.equal(demoted.role, 'Member')

    // Suspended in the row alone (the sessions not ended yet): inactive all the same.
    const fresh = await signup(server, t.slug)
    await setUser(server, t.tenantId, fresh.user.id, { status: 'Suspended' })
    assert.deepEqual(await state(fresh.accessToken), INACTIVE)
    // Suspended through the API: inactive.
    assert.equal((await patch({ status: 'Suspended' })).status, 200)
    assert.deepEqual(await state(token), INACTIVE)
  })

  test("rule: another tenant's token is inactive here, active there", async () => {
    assert.deepEqual(await state(other.admin.accessToken), INACTIVE)
    const there = await state(other.admin.accessToken, server, other.slug, otherKey)
    assert.equal(there.active, true)
  })

  test('rule: a tampered, unsigned, garbage or non-access token is inactive', async () => {
    const [h, p, s] = t.admin.accessToken.split('.')
    const payload = decodePart(t.admin.accessToken, 1)
    const raised = Buffer.from(JSON.stringify({ ...payload, role: 'Owner' })).toString('base64url')
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')
    const u = await signup(server, t.slug)
    for (const token of [
      `${h}.${raised}.${s}`,
      `${h}.${p}.${s.slice(0, -4)}AAAA`,
      `${none}.${p}.`,
      'garbage',
      'a.b.c',
      '...',
      '{}',
      'x'.repeat(4096),
      u.refreshToken,
      key,
    ]) {
      assert.deepEqual(await state(token), INACTIVE, token.slice(0, 40))
    }
    assert.equal((await state(t.admin.accessToken)).active, true, 'the original is active')
  })
})

describe('the caller', () => {
  test('rule: a user access token cannot introspect, an Admin’s neither (401)', async () => {
    for (const credential of [t.admin.accessToken, (await signup(server, t.slug)).accessToken]) {
      expectError(
        await introspect(server, t.slug, credential, { token: t.admin.accessToken }),
        401,
        'invalid_api_key',
      )
    }
  })

  test("rule: another tenant's API key is refused (401)", async () => {
    expectError(
      await introspect(server, t.slug, otherKey, { token: t.admin.accessToken }),
      401,
      'invalid_api_key',
    )
    expectError(
      await introspect(server, t.slug, otherKey, { token: other.admin.accessToken }),
      401,
      'invalid_api_key',
    )
  })

  test('a missing, revoked or expired key is refused (401)', async () => {
    const body = { token: t.admin.accessToken }
    expectError(await introspect(server, t.slug, undefined, body), 401, 'token_missing')
    const revoked = await insertApiKey(server, t.tenantId, { revokedAt: new Date() })
    expectError(await introspect(server, t.slug, revoked, body), 401, 'invalid_api_key')
    const expiresAt = new Date(server.clock.now().getTime() - 1000)
    const expired = await insertApiKey(server, t.tenantId, { expiresAt })
    expectError(await introspect(server, t.slug, expired, body), 401, 'invalid_api_key')
    expectError(await introspect(server, t.slug, `${key}x`, body), 401, 'invalid_api_key')
  })

  test('an unknown tenant is 404 before anything else', async () => {
    expectError(
      await introspect(server, 'no-such-tenant-here', key, { token: 'x' }),
      404,
      'tenant_not_found',
    )
  })

  test('rule: each API key has the administration budget; past it 429 with Retry-After', async (ctx) => {
    const limited = await startTestServer(ctx, {
      limits: { ...GENEROUS_LIMITS, adminRequests: { points: 3, seconds: 60 } },
    })
    const tenant = await createTenant(limited)
    const first = await insertApiKey(limited, tenant.tenantId)
    const second = await insertApiKey(limited, tenant.tenantId)
    const body = { token: tenant.admin.accessToken }
    for (let i = 0; i < 3; i++) {
      assert.equal((await introspect(limited, tenant.slug, first, body)).status, 200)
    }
    expectError(await introspect(limited, tenant.slug, first, body), 429, 'rate_limited')
    assert.equal((await introspect(limited, tenant.slug, second, body)).status, 200)
  })
})

describe('bad input is 400 in the envelope and changes nothing', () => {
  test('a missing, empty, non-string or oversized token', async () => {
    await unchanged(server, [t.tenantId], async () => {
      for (const body of [
        {},
        { token: '' },
        { token: 123 },
        { token: null },
        { token: [t.admin.accessToken] },
        { token: { value: t.admin.accessToken } },
        { token: 'x'.repeat(4097) },
        { token: `${t.admin.accessToken}\u0000` },
      ]) {
        expectValidation(await introspect(server, t.slug, key, body), 'body.token')
      }
      expectValidation(await introspect(server, t.slug, key, undefined), 'body')
    })
  })

  test('malformed JSON, or a form body instead of JSON', async () => {
    await unchanged(server, [t.tenantId], async () => {
      expectError(
        await introspect(server, t.slug, key, undefined, '{"token": "abc'),
        400,
        'malformed_json',
      )
      const form = await server.request('POST', `/v1/${t.slug}/oauth/introspect`, undefined, {
        token: key,
        raw: `token=${t.admin.accessToken}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expectError(form, 400, 'unsupported_media_type')
    })
  })
})

describe('the API description', () => {
  test('both routes are documented with their operationId and security', async () => {
    const doc = (await server.request('GET', '/v1/openapi.json')).body
    const jwks = doc.paths['/.well-known/jwks.json'].get
    assert.equal(jwks.operationId, 'getJwks')
    assert.deepEqual(jwks.security, [])
    const op = doc.paths['/v1/{tenantSlug}/oauth/introspect'].post
    assert.equal(op.operationId, 'introspectToken')
    assert.deepEqual(op.security, [{ apiKey: [] }])
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '401', '404', '429'])
  })
})
