// Several instances behave as one (issue "Hardening", section "Several instances"): two
// instances on different ports share one PostgreSQL and, where set, one Redis. A refresh
// token, a TOTP time step, a login code and an invitation are each single-use across
// both; every budget of CONTRACT §6 and §8 counts requests made through either; a logout
// on one reaches the other within 5 s (CONTRACT §4), with Redis and without it; a revoked
// API key is refused by the other at its next request.
import assert from 'node:assert/strict'
import { after, before, describe, type TestContext, test } from 'node:test'
import { Secret, TOTP } from 'otpauth'
import { and, eq } from '../src/db/orm.ts'
import { users } from '../src/db/schema.ts'
import { hashToken } from '../src/lib/crypto.ts'
import { normalizeEmail } from '../src/lib/email.ts'
import type { Limits } from '../src/lib/limits.ts'
import { sessionRows } from './db.ts'
import { expectError } from './envelope.ts'
import { createKey } from './fixtures/apikeys.ts'
import {
  createTenant,
  eventually,
  GENEROUS_LIMITS,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startSecondInstance,
  startServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from './helpers.ts'
import { SmtpSink } from './smtp-sink.ts'

type Instance = { request: TestServer['request'] }
type SecondInstance = Awaited<ReturnType<typeof startSecondInstance>>

const WRONG = 'definitely-not-it-42'

// PGlite is one process's database: a second instance could not share it for real.
const NEEDS_POSTGRES = process.env.DATABASE_URL
  ? false
  : 'needs DATABASE_URL: two instances share one PostgreSQL'
const NEEDS_REDIS = process.env.REDIS_URL ? false : 'needs REDIS_URL: shared through Redis'

const meOn = (server: Instance, slug: string, token: string) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })

const loginOn = (server: Instance, slug: string, body: Record<string, unknown>, ip = randomIp()) =>
  server.request('POST', `/v1/${slug}/auth/login`, body, { ip })

/** The code an authenticator shows for `secret` at the shared clock's time (RFC 6238). */
function totpNow(server: TestServer, secret: string): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    timestamp: server.clock.now().getTime(),
  })
}

/** Changes tenant settings through A's admin API (before B has read the tenant). */
async function patchTenant(a: TestServer, t: TenantFixture, changes: Record<string, unknown>) {
  const res = await a.request('PATCH', `/v1/${t.slug}/tenant`, changes, {
    token: t.admin.accessToken,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

/** A refused access token must stay refused: within 5 s, then with reason session_revoked. */
async function refusedWithin5s(server: Instance, slug: string, token: string, where: string) {
  const refused = await eventually(async () => (await meOn(server, slug, token)).status === 401)
  assert.ok(refused, `${where} still accepts a revoked access token after 5 s`)
  expectError(await meOn(server, slug, token), 401, 'session_revoked')
}

describe('two instances on one PostgreSQL behave as one', { skip: NEEDS_POSTGRES }, () => {
  let sink: SmtpSink
  let a: TestServer
  let b: SecondInstance

  before(async () => {
    sink = await new SmtpSink().start()
    a = await startServer({ smtpUrl: sink.url })
    // With Redis, B reads the database's revocation feed only once a minute, so a
    // revocation made on A must reach it through the Redis broadcast.
    b = await startSecondInstance(a, {
      smtpUrl: sink.url,
      ...(process.env.REDIS_URL ? { revocationPollMs: 60_000 } : {}),
    })
  })
  after(async () => {
    await b?.close()
    await a?.close()
    await sink?.stop()
  })

  test('rule: a refresh token rotated on A is reuse on B, and the family ends on both', async () => {
    const t = await createTenant(a)
    const user = await signup(a, t.slug)
    const rotated = await a.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: user.refreshToken,
    })
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body))
    assert.equal((await meOn(b, t.slug, rotated.body.accessToken)).status, 200)

    const reuse = await b.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: user.refreshToken,
    })
    expectError(reuse, 401, 'refresh_token_reused')

    // The successor of the reused token is dead on both instances.
    for (const server of [a, b]) {
      const next = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
        refreshToken: rotated.body.refreshToken,
      })
      expectError(next, 401, 'session_revoked')
    }
    // So is the access token of the family, on both.
    await refusedWithin5s(b, t.slug, rotated.body.accessToken, 'B')
    await refusedWithin5s(a, t.slug, rotated.body.accessToken, 'A')
    const [session] = await sessionRows(a, t.tenantId, user.user.id)
    assert.ok(session.revokedAt, 'the session row is revoked')
    assert.equal(session.revokeReason, 'reuse')
  })

  test('rule: logout on A is refused on B within 5 s, through the Redis broadcast', {
    skip: NEEDS_REDIS,
  }, async () => {
    assert.ok(a.deps.config.redisUrl && b.deps.config.redisUrl, 'both instances use Redis')
    assert.equal(b.deps.config.revocationPollMs, 60_000, 'B does not poll in time')
    const t = await createTenant(a)
    const user = await signup(a, t.slug)
    assert.equal((await meOn(b, t.slug, user.accessToken)).status, 200)
    const out = await a.request('POST', `/v1/${t.slug}/auth/logout`, {
      refreshToken: user.refreshToken,
    })
    assert.equal(out.status, 200, JSON.stringify(out.body))
    await refusedWithin5s(b, t.slug, user.accessToken, 'B')
  })

  test('rule: logout on A is refused on B within 5 s without Redis, through the database feed', async (ctx) => {
    const noRedisA = await startServer({ redisUrl: undefined, revocationPollMs: 1000 })
    const noRedisB = await startSecondInstance(noRedisA, {
      redisUrl: undefined,
      revocationPollMs: 1000,
    })
    ctx.after(async () => {
      await noRedisB.close()
      await noRedisA.close()
    })
    assert.equal(noRedisA.deps.config.redisUrl, undefined)
    assert.equal(noRedisB.deps.config.redisUrl, undefined)
    const t = await createTenant(noRedisA)
    const user = await signup(noRedisA, t.slug)
    assert.equal((await meOn(noRedisB, t.slug, user.accessToken)).status, 200)
    const out = await noRedisA.request('POST', `/v1/${t.slug}/auth/logout`, {
      refreshToken: user.refreshToken,
    })
    assert.equal(out.status, 200, JSON.stringify(out.body))
    await refusedWithin5s(noRedisB, t.slug, user.accessToken, 'B')
  })

  test('rule: an API key revoked on A is refused on B at the next request, with Redis and without', async (ctx) => {
    const noRedisA = await startServer({ redisUrl: undefined })
    const noRedisB = await startSecondInstance(noRedisA, { redisUrl: undefined })
    ctx.after(async () => {
      await noRedisB.close()
      await noRedisA.close()
    })
    const pairs: [TestServer, SecondInstance][] = [
      [a, b],
      [noRedisA, noRedisB],
    ]
    for (const [first, second] of pairs) {
      const t = await createTenant(first)
      const { plaintext, apiKey } = await createKey(first, t.slug, t.admin.accessToken)
      const url = `/v1/${t.slug}/users?limit=1`
      assert.equal((await second.request('GET', url, undefined, { token: plaintext })).status, 200)
      // With Redis B keeps the key it verified (apikeys/cache.ts); without, it keeps none.
      const kept = second.deps.apiKeys.peek(t.tenantId, hashToken(plaintext)) !== undefined
      assert.equal(kept, second.deps.config.redisUrl !== undefined)
      const del = await first.request('DELETE', `/v1/${t.slug}/api-keys/${apiKey.id}`, undefined, {
        token: t.admin.accessToken,
      })
      assert.equal(del.status, 200)
      expectError(
        await second.request('GET', url, undefined, { token: plaintext }),
        401,
        'invalid_api_key',
      )
    }
  })

  test('rule: a TOTP time step accepted by one instance is refused by the other', async () => {
    const t = await createTenant(a)
    await patchTenant(a, t, { mfaPolicy: 'Optional' })
    const user = await signup(a, t.slug)
    const begun = await a.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, {
      token: user.accessToken,
    })
    assert.equal(begun.status, 200, JSON.stringify(begun.body))
    const secret = begun.body.secret as string
    const enrolled = await a.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code: totpNow(a, secret) },
      { token: user.accessToken },
    )
    assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body))
    const withCode = (totpCode: string) => ({
      email: user.email,
      password: user.password,
      totpCode,
    })

    // A accepts a step; B refuses the same step.
    a.clock.advance(30)
    const step1 = totpNow(a, secret)
    assert.equal((await loginOn(a, t.slug, withCode(step1))).status, 200)
    expectError(await loginOn(b, t.slug, withCode(step1)), 401, 'invalid_mfa_code')

    // The other way round at the next step.
    a.clock.advance(30)
    const step2 = totpNow(a, secret)
    assert.equal((await loginOn(b, t.slug, withCode(step2))).status, 200)
    expectError(await loginOn(a, t.slug, withCode(step2)), 401, 'invalid_mfa_code')

    // Both at once: exactly one of them accepts the step.
    a.clock.advance(30)
    const step3 = totpNow(a, secret)
    const raced = await Promise.all([
      loginOn(a, t.slug, withCode(step3)),
      loginOn(b, t.slug, withCode(step3)),
    ])
    assert.deepEqual(
      raced.map((r) => r.status).sort(),
      [200, 401],
      JSON.stringify(raced.map((r) => r.body)),
    )
    expectError(raced.find((r) => r.status === 401) as (typeof raced)[0], 401, 'invalid_mfa_code')
  })

  test('rule: a login code requested through A verifies through B, once', async () => {
    const t = await createTenant(a)
    await patchTenant(a, t, { authPolicy: 'PasswordAndPasswordless' })
    const user = await signup(a, t.slug)
    const asked = await a.request('POST', `/v1/${t.slug}/auth/request-login-code`, {
      email: user.email,
    })
    assert.equal(asked.status, 200, JSON.stringify(asked.body))
    const code = await sink.codeAfter(user.email, 0)

    const verified = await b.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email: user.email,
      code,
    })
    assert.equal(verified.status, 200, JSON.stringify(verified.body))
    assert.equal(verified.body.user.id, user.user.id)
    assert.equal((await meOn(a, t.slug, verified.body.accessToken)).status, 200)
    // B spent it: A refuses the same code.
    const again = await a.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email: user.email,
      code,
    })
    expectError(again, 401, 'invalid_code')
  })

  test('rule: an invite accepted through both instances at once creates exactly one user', async () => {
    const t = await createTenant(a)
    const email = uniqueEmail('invitee')
    const invited = await a.request(
      'POST',
      `/v1/${t.slug}/invites`,
      { email, sendEmail: false },
      { token: t.admin.accessToken },
    )
    assert.equal(invited.status, 200, JSON.stringify(invited.body))
    const accept = { token: invited.body.token, password: STRONG_PASSWORD }

    const results = await Promise.all([
      a.request('POST', '/v1/invites/accept', accept),
      b.request('POST', '/v1/invites/accept', accept),
    ])
    assert.deepEqual(
      results.map((r) => r.status).sort(),
      [200, 409],
      JSON.stringify(results.map((r) => r.body)),
    )
    const won = results.find((r) => r.status === 200) as (typeof results)[0]
    expectError(results.find((r) => r.status === 409) as (typeof results)[0], 409, 'invite_used')

    const rows = await a.deps.db
      .select()
      .from(users)
      .where(and(eq(users.tenantId, t.tenantId), eq(users.emailNormalized, normalizeEmail(email))))
    assert.equal(rows.length, 1, 'one user for the address in the tenant')
    assert.equal(rows[0].id, won.body.user.id)
    assert.equal(rows[0].status, 'Active')
    assert.equal((await sessionRows(a, t.tenantId, rows[0].id)).length, 1, 'one session')
  })
})

// Budgets are shared through Redis; each test starts its own pair with one small budget.
describe('every budget counts requests made through either instance (CONTRACT §6, §8)', {
  skip: NEEDS_POSTGRES || NEEDS_REDIS,
}, () => {
  /** A and B with the same small budgets, closed when the test ends. */
  async function pairWith(ctx: TestContext, limits: Limits) {
    const first = await startServer({ limits })
    const second = await startSecondInstance(first, { limits })
    ctx.after(async () => {
      await second.close()
      await first.close()
    })
    return { a: first, b: second }
  }

  test('rule: login failures per (tenant, email, IP): 2 on A and 1 on B spend 3', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      loginFailures: { points: 3, seconds: 900 },
    })
    const t = await createTenant(a)
    const user = await signup(a, t.slug)
    const ip = randomIp()
    const wrong = { email: user.email, password: WRONG }
    const right = { email: user.email, password: user.password }
    expectError(await loginOn(a, t.slug, wrong, ip), 401, 'invalid_credentials')
    expectError(await loginOn(b, t.slug, wrong, ip), 401, 'invalid_credentials')
    expectError(await loginOn(a, t.slug, wrong, ip), 401, 'invalid_credentials')
    expectError(await loginOn(b, t.slug, right, ip), 429, 'rate_limited')
    expectError(await loginOn(a, t.slug, right, ip), 429, 'rate_limited')
    // Another address is not held: the budget is this (tenant, email, IP).
    assert.equal((await loginOn(b, t.slug, right)).status, 200)
  })

  test('rule: the per-account cap counts failures from every IP on both', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      accountFailures: { points: 4, seconds: 3600 },
    })
    const t = await createTenant(a)
    const user = await signup(a, t.slug)
    const wrong = { email: user.email, password: WRONG }
    const right = { email: user.email, password: user.password }
    for (const server of [a, b, a, b]) {
      expectError(await loginOn(server, t.slug, wrong), 401, 'invalid_credentials')
    }
    for (const server of [a, b]) {
      const held = await loginOn(server, t.slug, right)
      expectError(held, 429, 'rate_limited')
      const retryAfter = Number(held.headers.get('retry-after'))
      assert.ok(retryAfter > 3000 && retryAfter <= 3600, `held for the hour: ${retryAfter}`)
    }
  })

  test('rule: login-code requests per (tenant, email) count on both', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      codeRequestsPerEmail: { points: 3, seconds: 900 },
    })
    const t = await createTenant(a)
    await patchTenant(a, t, { authPolicy: 'PasswordAndPasswordless' })
    const email = uniqueEmail('codes')
    const ask = (server: Instance) =>
      server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email })
    for (const server of [a, b, a]) assert.equal((await ask(server)).status, 200)
    expectError(await ask(b), 429, 'rate_limited')
    expectError(await ask(a), 429, 'rate_limited')
  })

  test('rule: login-code requests per IP count on both', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      codeRequestsPerIp: { points: 3, seconds: 60 },
    })
    const t = await createTenant(a)
    await patchTenant(a, t, { authPolicy: 'PasswordAndPasswordless' })
    const ip = randomIp()
    const ask = (server: Instance) =>
      server.request(
        'POST',
        `/v1/${t.slug}/auth/request-login-code`,
        { email: uniqueEmail('codes') },
        { ip },
      )
    for (const server of [a, b, a]) assert.equal((await ask(server)).status, 200)
    expectError(await ask(b), 429, 'rate_limited')
    expectError(await ask(a), 429, 'rate_limited')
  })

  test('rule: tenant creation per IP counts on both', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      tenantCreation: { points: 3, seconds: 3600 },
    })
    const ip = randomIp()
    const create = (server: Instance) =>
      server.request(
        'POST',
        '/v1/tenants',
        {
          tenant: { slug: uniqueSlug(), name: 'Multi Instance' },
          admin: { email: uniqueEmail('admin'), password: STRONG_PASSWORD },
        },
        { ip },
      )
    for (const server of [a, b, a]) {
      const res = await create(server)
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
    expectError(await create(b), 429, 'rate_limited')
    expectError(await create(a), 429, 'rate_limited')
  })

  test('rule: signup per IP counts on both', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      signup: { points: 3, seconds: 3600 },
    })
    const t = await createTenant(a)
    const ip = randomIp()
    const join = (server: Instance) =>
      server.request(
        'POST',
        `/v1/${t.slug}/auth/signup`,
        { email: uniqueEmail(), password: STRONG_PASSWORD },
        { ip },
      )
    for (const server of [a, b, a]) {
      const res = await join(server)
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
    expectError(await join(b), 429, 'rate_limited')
    expectError(await join(a), 429, 'rate_limited')
  })

  test('rule: refresh, verify, accept and callback share one per-IP budget on both', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      tokenEndpoints: { points: 4, seconds: 60 },
    })
    const t = await createTenant(a)
    await patchTenant(a, t, { authPolicy: 'PasswordAndPasswordless' })
    const user = await signup(a, t.slug)
    const ip = randomIp()
    const refreshed = await a.request(
      'POST',
      `/v1/${t.slug}/auth/refresh`,
      { refreshToken: user.refreshToken },
      { ip },
    )
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body))
    const verify = await b.request(
      'POST',
      `/v1/${t.slug}/auth/verify-login-code`,
      { email: user.email, code: '000000' },
      { ip },
    )
    expectError(verify, 401, 'invalid_code')
    const accept = await a.request(
      'POST',
      '/v1/invites/accept',
      { token: 'no-such-invite-token', password: STRONG_PASSWORD },
      { ip },
    )
    expectError(accept, 401, 'invalid_invite')
    // No identity provider is configured: the callback fails, but it was counted.
    const callback = await b.request(
      'GET',
      `/v1/${t.slug}/oauth/idp/callback?code=c&state=s`,
      undefined,
      { ip },
    )
    assert.equal(callback.status, 400, JSON.stringify(callback.body))
    const refresh = (server: Instance) =>
      server.request(
        'POST',
        `/v1/${t.slug}/auth/refresh`,
        { refreshToken: refreshed.body.refreshToken },
        { ip },
      )
    expectError(await refresh(b), 429, 'rate_limited')
    expectError(await refresh(a), 429, 'rate_limited')
  })

  test('rule: admin requests of one admin count on both', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      adminRequests: { points: 4, seconds: 60 },
    })
    const t = await createTenant(a)
    const read = (server: Instance) =>
      server.request('GET', `/v1/${t.slug}/tenant`, undefined, {
        token: t.admin.accessToken,
      })
    for (const server of [a, b, a, b]) assert.equal((await read(server)).status, 200)
    expectError(await read(a), 429, 'rate_limited')
    expectError(await read(b), 429, 'rate_limited')
  })

  test('rule: sign-in failures per client address count across emails, tenants and both instances', async (ctx) => {
    const { a, b } = await pairWith(ctx, {
      ...GENEROUS_LIMITS,
      loginFailuresPerIp: { points: 5, seconds: 3600 },
    })
    const t1 = await createTenant(a)
    await patchTenant(a, t1, { authPolicy: 'PasswordAndPasswordless' })
    const t2 = await createTenant(a)
    const member1 = await signup(a, t1.slug)
    const member2 = await signup(a, t2.slug)
    const untried = await signup(a, t2.slug)
    const ip = randomIp()

    // Five first-factor failures from one address: passwords, a login code and an
    // invitation token, for different emails in two tenants, through A and B.
    const failures = [
      await loginOn(a, t1.slug, { email: uniqueEmail('ghost'), password: WRONG }, ip),
      await loginOn(b, t2.slug, { email: member2.email, password: WRONG }, ip),
      await a.request(
        'POST',
        `/v1/${t1.slug}/auth/verify-login-code`,
        { email: member1.email, code: '000000' },
        { ip },
      ),
      await b.request(
        'POST',
        '/v1/invites/accept',
        { token: 'no-such-invite-token', password: STRONG_PASSWORD },
        { ip },
      ),
      await loginOn(b, t1.slug, { email: uniqueEmail('ghost'), password: WRONG }, ip),
    ]
    expectError(failures[0], 401, 'invalid_credentials')
    expectError(failures[1], 401, 'invalid_credentials')
    expectError(failures[2], 401, 'invalid_code')
    expectError(failures[3], 401, 'invalid_invite')
    expectError(failures[4], 401, 'invalid_credentials')

    // Spent: the right password of an account this address never tried is 429 on both.
    const right = { email: untried.email, password: untried.password }
    expectError(await loginOn(a, t2.slug, right, ip), 429, 'rate_limited')
    expectError(await loginOn(b, t2.slug, right, ip), 429, 'rate_limited')
    // Another address signs in.
    assert.equal((await loginOn(b, t2.slug, right)).status, 200)
  })
})
