// POST /v1/{tenantSlug}/auth/signup (SPEC, Authentication; CONTRACT §2, §4, §6).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  actionsSince,
  auditMark,
  auditSince,
  setTenant,
  setUser,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startServer,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server, { name: 'Orchard Analytics' })
})

const path = () => `/v1/${t.slug}/auth/signup`

/** Sends a signup that must fail, and asserts the tenant's rows are exactly as before. */
async function refused(sent: unknown, options: Parameters<TestServer['request']>[3] = {}) {
  const before = await tenantSnapshot(server, t.tenantId)
  const res = await server.request('POST', path(), sent, options)
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), before, 'nothing changed')
  return res
}

describe('POST auth/signup', () => {
  test('creates an Active Member and signs it in', async () => {
    const email = uniqueEmail()
    const mark = await auditMark(server, t.tenantId)
    const res = await server.request(
      'POST',
      path(),
      { email, password: STRONG_PASSWORD },
      { ip: '10.1.2.3', headers: { 'user-agent': 'signup-test/2.0' } },
    )
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
    assert.equal(res.body.user.email, email)
    assert.equal(res.body.user.role, 'Member')
    assert.equal(res.body.user.status, 'Active')
    assert.equal(res.body.user.tenantId, t.tenantId)
    assert.equal(res.body.user.emailVerified, false)
    assert.equal(res.body.user.totpEnrolled, false)
    assert.equal(res.body.user.lastLoginAt, null)
    assert.ok(!Number.isNaN(Date.parse(res.body.user.createdAt)))
    assert.ok(res.body.refreshToken.length >= 43, 'at least 256 bits')

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionCreated', 'UserSignup'],
    )
    for (const e of events) {
      assert.equal(e.userId, res.body.user.id)
      assert.equal(e.ip, '10.1.2.3')
      assert.equal(e.userAgent, 'signup-test/2.0')
    }
    const stored = await userByEmail(server, t.tenantId, email)
    assert.ok(stored?.passwordHash?.startsWith('$argon2id$v=19$m=19456,t=2,p=1$'))
    assert.ok(!JSON.stringify(events).includes(STRONG_PASSWORD), 'no password in the audit log')

    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(me.status, 200)
    assert.equal(me.body.id, res.body.user.id)
  })

  test('an address already taken is 400 email_taken, whatever its case and spacing', async () => {
    const { email } = await signup(server, t.slug)
    for (const variant of [email, email.toUpperCase(), `  ${email} `]) {
      const res = await refused({ email: variant, password: 'another-fine-password' })
      expectError(res, 400, 'email_taken')
    }
    // The tenant's admin address too.
    expectError(
      await refused({ email: t.adminEmail, password: STRONG_PASSWORD }),
      400,
      'email_taken',
    )
  })

  test('two parallel signups of one address: exactly one account', async () => {
    const email = uniqueEmail('twin')
    const results = await Promise.all(
      [0, 1, 2].map(() => server.request('POST', path(), { email, password: STRONG_PASSWORD })),
    )
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400])
    for (const r of results.filter((r) => r.status === 400)) expectError(r, 400, 'email_taken')
    const snapshot = await tenantSnapshot(server, t.tenantId)
    assert.equal(snapshot.users.filter((u) => u.emailNormalized === email).length, 1)
  })

  test('the same address may sign up in another tenant', async () => {
    const other = await createTenant(server)
    const { email } = await signup(server, t.slug)
    const res = await server.request('POST', `/v1/${other.slug}/auth/signup`, {
      email,
      password: STRONG_PASSWORD,
    })
    assert.equal(res.status, 200)
    assert.equal(res.body.user.tenantId, other.tenantId)
  })

  test('a password outside 12 to 1024 characters is 400', async () => {
    for (const password of ['', 'eleven-char', 'p'.repeat(1025)]) {
      expectValidation(await refused({ email: uniqueEmail(), password }), 'body.password')
    }
    const edge = await server.request('POST', path(), {
      email: uniqueEmail(),
      password: 'twelve-chars',
    })
    assert.equal(edge.status, 200, 'exactly 12 characters is enough')
  })

  test('rule: a weak password is refused with 400 password_too_weak', async () => {
    const email = uniqueEmail('weak')
    for (const password of [
      'qwerty123456', // common-password list
      '1q2w3e4r5t6y',
      'LeaveMeAlone', // the list ignores case
      email, // equal to the email
      ` ${email.toUpperCase()}`.trim(),
      'Orchard Analytics', // equal to the tenant name
      'orchard analytics',
    ]) {
      expectError(await refused({ email, password }), 400, 'password_too_weak')
    }
  })

  test('missing fields, wrong types and bad addresses are 400 validation', async () => {
    const cases: [unknown, string][] = [
      [{ password: STRONG_PASSWORD }, 'body.email'],
      [{ email: uniqueEmail() }, 'body.password'],
      [{}, 'body.email'],
      [{ email: 42, password: STRONG_PASSWORD }, 'body.email'],
      [{ email: [uniqueEmail()], password: STRONG_PASSWORD }, 'body.email'],
      [{ email: { value: uniqueEmail() }, password: STRONG_PASSWORD }, 'body.email'],
      [{ email: null, password: STRONG_PASSWORD }, 'body.email'],
      [{ email: uniqueEmail(), password: 123456789012345 }, 'body.password'],
      [{ email: uniqueEmail(), password: [STRONG_PASSWORD] }, 'body.password'],
      [{ email: uniqueEmail(), password: true }, 'body.password'],
      [{ email: 'not-an-email', password: STRONG_PASSWORD }, 'body.email'],
      [{ email: 'two@@example.com', password: STRONG_PASSWORD }, 'body.email'],
      [{ email: `${'a'.repeat(250)}@x.io`, password: STRONG_PASSWORD }, 'body.email'],
      [{ email: 'tab\t@example.com', password: STRONG_PASSWORD }, 'body.email'],
    ]
    for (const [sent, field] of cases) expectValidation(await refused(sent), field)
    for (const sent of [[], 'email', 42, null]) {
      expectValidation(await refused(undefined, { raw: JSON.stringify(sent) }), 'body')
    }
  })

  test('rule: a signup body cannot set role, status, emailVerified or tenantId', async () => {
    const other = await createTenant(server)
    const email = uniqueEmail('sneaky')
    const res = await server.request('POST', path(), {
      email,
      password: STRONG_PASSWORD,
      role: 'Admin',
      status: 'Pending',
      emailVerified: true,
      tenantId: other.tenantId,
      id: '00000000-0000-4000-8000-000000000009',
      totpEnabled: true,
      passwordHash: '$argon2id$forged',
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.role, 'Member')
    assert.equal(res.body.user.status, 'Active')
    assert.equal(res.body.user.emailVerified, false)
    assert.equal(res.body.user.tenantId, t.tenantId)
    const stored = await userByEmail(server, t.tenantId, email)
    assert.ok(stored)
    assert.equal(stored.role, 'Member')
    assert.equal(stored.totpEnabled, false)
    assert.notEqual(stored.id, '00000000-0000-4000-8000-000000000009')
    assert.ok(stored.passwordHash?.startsWith('$argon2id$v=19$'))
    assert.equal(await userByEmail(server, other.tenantId, email), undefined)
    // Admin routes stay closed to it: its token carries role Member.
    const claims = JSON.parse(
      Buffer.from(res.body.accessToken.split('.')[1], 'base64url').toString('utf8'),
    )
    assert.equal(claims.role, 'Member')
  })

  test('rule: a __proto__ or constructor key in a signup body is refused', async () => {
    const email = uniqueEmail('proto')
    for (const raw of [
      `{"email":"${email}","password":"${STRONG_PASSWORD}","__proto__":{"role":"Admin"}}`,
      `{"__proto__":{"role":"Admin","emailVerified":true},"email":"${email}","password":"${STRONG_PASSWORD}"}`,
      `{"email":"${email}","password":"${STRONG_PASSWORD}","constructor":{"prototype":{"role":"Admin"}}}`,
    ]) {
      expectError(await refused(undefined, { raw }), 400, 'malformed_json')
    }
    assert.equal(await userByEmail(server, t.tenantId, email), undefined)
    assert.equal(({} as Record<string, unknown>).role, undefined, 'Object.prototype untouched')
  })

  test('malformed JSON, other content types and oversized bodies change nothing', async () => {
    expectError(
      await refused(undefined, { raw: '{"email": "a@b.co", "password": ' }),
      400,
      'malformed_json',
    )
    expectError(await refused(undefined, { raw: '' }), 400, 'malformed_json')
    expectError(
      await refused(undefined, {
        raw: `email=${uniqueEmail()}&password=${STRONG_PASSWORD}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      400,
      'unsupported_media_type',
    )
    expectError(
      await refused(undefined, {
        raw: JSON.stringify({ email: uniqueEmail(), password: STRONG_PASSWORD }),
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      'unsupported_media_type',
    )
    expectError(
      await refused({ email: uniqueEmail(), password: STRONG_PASSWORD, pad: 'x'.repeat(70_000) }),
      400,
      'body_too_large',
    )
  })

  test('an unknown tenant is 404 tenant_not_found, before the body is read', async () => {
    const email = uniqueEmail()
    for (const slug of ['no-such-tenant', 'x'.repeat(64), 'UPPER']) {
      const res = await server.request('POST', `/v1/${slug}/auth/signup`, {
        email,
        password: STRONG_PASSWORD,
      })
      expectError(res, 404, 'tenant_not_found')
    }
    const bad = await server.request('POST', '/v1/no-such-tenant/auth/signup', { email: 3 })
    expectError(bad, 404, 'tenant_not_found')
  })

  test('a soft-deleted tenant answers 404', async () => {
    const gone = await createTenant(server)
    await setTenant(server, gone.slug, { deletedAt: new Date() })
    const res = await server.request('POST', `/v1/${gone.slug}/auth/signup`, {
      email: uniqueEmail(),
      password: STRONG_PASSWORD,
    })
    expectError(res, 404, 'tenant_not_found')
    assert.equal((await tenantSnapshot(server, gone.tenantId)).users.length, 1)
  })

  test('a deleted account frees its address for a new signup', async () => {
    const first = await signup(server, t.slug)
    await setUser(server, t.tenantId, first.user.id, { deletedAt: new Date() })
    const res = await server.request('POST', path(), {
      email: first.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.notEqual(res.body.user.id, first.user.id)
  })

  test('a PasswordlessOnly tenant refuses password signups', async () => {
    const closed = await createTenant(server)
    await setTenant(server, closed.slug, { authPolicy: 'PasswordlessOnly' })
    const before = await tenantSnapshot(server, closed.tenantId)
    const res = await server.request('POST', `/v1/${closed.slug}/auth/signup`, {
      email: uniqueEmail(),
      password: STRONG_PASSWORD,
    })
    expectError(res, 400, 'password_login_disabled')
    assert.deepEqual(await tenantSnapshot(server, closed.tenantId), before)
  })
})

describe('signup rate limit (CONTRACT §6: 20 per hour per IP)', () => {
  let limited: TestServer
  let lt: TenantFixture
  before(async () => {
    limited = await startServer({
      limits: { ...GENEROUS_LIMITS, signup: { points: 3, seconds: 3600 } },
    })
    lt = await createTenant(limited)
  })
  after(() => limited.close())

  test('rule: signups past the budget are 429 with Retry-After and create no account', async () => {
    const ip = randomIp()
    for (let i = 0; i < 3; i++) {
      const res = await limited.request(
        'POST',
        `/v1/${lt.slug}/auth/signup`,
        { email: uniqueEmail(), password: STRONG_PASSWORD },
        { ip },
      )
      assert.equal(res.status, 200)
    }
    const before = await tenantSnapshot(limited, lt.tenantId)
    const res = await limited.request(
      'POST',
      `/v1/${lt.slug}/auth/signup`,
      { email: uniqueEmail(), password: STRONG_PASSWORD },
      { ip },
    )
    expectError(res, 429, 'rate_limited')
    assert.ok(Number(res.headers.get('retry-after')) <= 3600)
    assert.deepEqual(await tenantSnapshot(limited, lt.tenantId), before)
    const mark = await auditMark(limited, lt.tenantId)
    const other = await limited.request(
      'POST',
      `/v1/${lt.slug}/auth/signup`,
      { email: uniqueEmail(), password: STRONG_PASSWORD },
      { ip: randomIp() },
    )
    assert.equal(other.status, 200, 'another client is not held back')
    assert.deepEqual(await actionsSince(limited, lt.tenantId, mark), [
      'SessionCreated',
      'UserSignup',
    ])
  })

  test('rule: a parallel burst of signups from one IP gets no more than the budget', async () => {
    const ip = randomIp()
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        limited.request(
          'POST',
          `/v1/${lt.slug}/auth/signup`,
          { email: uniqueEmail('burst'), password: STRONG_PASSWORD },
          { ip },
        ),
      ),
    )
    const ok = results.filter((r) => r.status === 200).length
    assert.equal(ok, 3)
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 429, 'rate_limited')
    const snapshot = await tenantSnapshot(limited, lt.tenantId)
    assert.equal(snapshot.users.filter((u) => u.email.startsWith('burst-')).length, 3)
  })
})
