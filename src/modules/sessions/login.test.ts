// POST /v1/{tenantSlug}/auth/login with email and password (SPEC, Authentication;
// CONTRACT §3, §4).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { hash } from '@node-rs/argon2'
import {
  auditMark,
  auditSince,
  sessionRows,
  setTenant,
  setUser,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const login = (body: unknown, options?: Parameters<TestServer['request']>[3]) =>
  server.request('POST', `/v1/${t.slug}/auth/login`, body, options)

/** The tenant's rows other than audit events (a failed login may only add those). */
async function accounts(tenantId = t.tenantId) {
  const { audit: _audit, ...rest } = await tenantSnapshot(server, tenantId)
  return rest
}

describe('POST auth/login', () => {
  test('signs in with the right password and records the login', async () => {
    const u = await signup(server, t.slug)
    const mark = await auditMark(server, t.tenantId)
    const res = await login(
      { email: u.email, password: u.password },
      { ip: '10.20.30.40', headers: { 'user-agent': 'login-test/3.1' } },
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
    assert.equal(res.body.user.id, u.user.id)
    assert.equal(res.body.user.lastLoginAt, server.clock.now().toISOString())
    assert.notEqual(res.body.refreshToken, u.refreshToken)

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionCreated', 'UserLogin'],
    )
    const loginEvent = events.find((e) => e.action === 'UserLogin')!
    assert.deepEqual(loginEvent.metadata, { via: 'password' })
    for (const e of events) {
      assert.equal(e.userId, u.user.id)
      assert.equal(e.actorType, 'user')
      assert.equal(e.ip, '10.20.30.40')
      assert.equal(e.userAgent, 'login-test/3.1')
    }
    // Each sign-in is its own session; the signup's session still works.
    const sessions = await sessionRows(server, t.tenantId, u.user.id)
    assert.equal(sessions.length, 2)
    for (const token of [u.accessToken, res.body.accessToken]) {
      const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token })
      assert.equal(me.status, 200)
    }
  })

  test('the email is trimmed and compared without case', async () => {
    const u = await signup(server, t.slug, uniqueEmail('CamelCase'))
    for (const email of [u.email.toUpperCase(), `  ${u.email}  `, u.email.toLowerCase()]) {
      const res = await login({ email, password: u.password })
      assert.equal(res.status, 200, email)
      assert.equal(res.body.user.id, u.user.id)
    }
  })

  test('rule: an unknown email and a wrong password get the same 401 invalid_credentials', async () => {
    const u = await signup(server, t.slug)
    const before = await accounts()
    const mark = await auditMark(server, t.tenantId)
    const wrong = await login({ email: u.email, password: 'not-the-password-1' })
    const unknown = await login({ email: uniqueEmail('ghost'), password: u.password })
    expectError(wrong, 401, 'invalid_credentials')
    expectError(unknown, 401, 'invalid_credentials')
    assert.deepEqual(wrong.body, unknown.body, 'the two answers cannot be told apart')
    assert.deepEqual(
      [...wrong.headers.keys()].filter((k) => k !== 'date' && k !== 'content-length').sort(),
      [...unknown.headers.keys()].filter((k) => k !== 'date' && k !== 'content-length').sort(),
    )
    assert.deepEqual(await accounts(), before, 'no session, no user change')

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['UserLoginFailed', 'UserLoginFailed'],
    )
    const known = events.find((e) => e.userId === u.user.id)
    const ghost = events.find((e) => e.userId === null)
    assert.ok(known && ghost)
    assert.equal(known.metadata.email, u.email, 'the attempted email is kept')
    assert.match(String(ghost.metadata.email), /^ghost-/)
    assert.ok(!JSON.stringify(events).includes('not-the-password-1'), 'never the password')
    assert.ok(!JSON.stringify(events).includes(u.password), 'never the password')
  })

  test('a one-character password is a wrong password, not a validation error', async () => {
    const u = await signup(server, t.slug)
    expectError(await login({ email: u.email, password: 'x' }), 401, 'invalid_credentials')
  })

  test('a user of another tenant cannot sign in here', async () => {
    const other = await createTenant(server)
    const u = await signup(server, other.slug)
    const before = await accounts()
    expectError(await login({ email: u.email, password: u.password }), 401, 'invalid_credentials')
    expectError(
      await login({ email: other.adminEmail, password: other.adminPassword }),
      401,
      'invalid_credentials',
    )
    assert.deepEqual(await accounts(), before)
  })

  test('rule: a suspended user gets account_suspended with the right password only', async () => {
    const u = await signup(server, t.slug)
    await setUser(server, t.tenantId, u.user.id, { status: 'Suspended' })
    const before = await accounts()
    const mark = await auditMark(server, t.tenantId)
    expectError(await login({ email: u.email, password: u.password }), 401, 'account_suspended')
    expectError(
      await login({ email: u.email, password: 'wrong-password-here' }),
      401,
      'invalid_credentials',
    )
    assert.deepEqual(await accounts(), before, 'no session was created')
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(events.map((e) => e.metadata.reason).sort(), [
      'account_suspended',
      'invalid_credentials',
    ])
  })

  test('a Pending user cannot sign in with a password', async () => {
    const u = await signup(server, t.slug)
    await setUser(server, t.tenantId, u.user.id, { status: 'Pending' })
    const before = await accounts()
    expectError(await login({ email: u.email, password: u.password }), 401, 'invalid_credentials')
    assert.deepEqual(await accounts(), before)
  })

  test('a deleted user cannot sign in', async () => {
    const u = await signup(server, t.slug)
    await setUser(server, t.tenantId, u.user.id, { deletedAt: new Date() })
    expectError(await login({ email: u.email, password: u.password }), 401, 'invalid_credentials')
  })

  test('rule: passwords are normalised to NFC (typed in NFD, signed up in NFC)', async () => {
    const nfc = 'Crème brûlée à la façon 9'.normalize('NFC')
    const nfd = nfc.normalize('NFD')
    assert.notEqual(nfc, nfd)
    const a = await signup(server, t.slug, uniqueEmail('nfc'), nfc)
    assert.equal((await login({ email: a.email, password: nfd })).status, 200, 'NFD signs in')
    assert.equal((await login({ email: a.email, password: nfc })).status, 200, 'NFC signs in')
    const b = await signup(server, t.slug, uniqueEmail('nfd'), nfd)
    assert.equal((await login({ email: b.email, password: nfc })).status, 200, 'and back')
    // Normalisation is not folding: other letters are other passwords.
    expectError(
      await login({ email: a.email, password: 'Creme brulee a la facon 9' }),
      401,
      'invalid_credentials',
    )
  })

  test('rule: passwords are never truncated (1024 characters, only the last differs)', async () => {
    const long = `${'correct horse battery staple '.repeat(36)}`.slice(0, 1023)
    const password = `${long}A`
    assert.equal(password.length, 1024)
    const u = await signup(server, t.slug, uniqueEmail('long'), password)
    expectError(await login({ email: u.email, password: `${long}B` }), 401, 'invalid_credentials')
    expectError(await login({ email: u.email, password: long }), 401, 'invalid_credentials')
    assert.equal((await login({ email: u.email, password })).status, 200)
    // Multi-byte characters count as characters, not bytes.
    const wide = '密'.repeat(1023)
    const w = await signup(server, t.slug, uniqueEmail('wide'), `${wide}一`)
    expectError(await login({ email: w.email, password: `${wide}二` }), 401, 'invalid_credentials')
    assert.equal((await login({ email: w.email, password: `${wide}一` })).status, 200)
  })

  test('rule: a hash made with older argon2 parameters is upgraded at the next login', async () => {
    const u = await signup(server, t.slug)
    const weak = await hash(u.password, {
      algorithm: 2, // argon2id
      memoryCost: 4096,
      timeCost: 1,
      parallelism: 1,
    })
    assert.ok(weak.startsWith('$argon2id$v=19$m=4096,t=1,p=1$'))
    await setUser(server, t.tenantId, u.user.id, { passwordHash: weak })

    // A wrong password does not touch the stored hash.
    expectError(
      await login({ email: u.email, password: 'wrong-password-1' }),
      401,
      'invalid_credentials',
    )
    assert.equal((await userByEmail(server, t.tenantId, u.email))?.passwordHash, weak)

    assert.equal((await login({ email: u.email, password: u.password })).status, 200)
    const upgraded = (await userByEmail(server, t.tenantId, u.email))?.passwordHash
    assert.ok(upgraded?.startsWith('$argon2id$v=19$m=19456,t=2,p=1$'), upgraded ?? 'no hash')
    assert.equal((await login({ email: u.email, password: u.password })).status, 200)
    assert.equal(
      (await userByEmail(server, t.tenantId, u.email))?.passwordHash,
      upgraded,
      'a current hash is not rehashed again',
    )
  })

  test('a PasswordlessOnly tenant refuses password logins', async () => {
    const closed = await createTenant(server)
    await setTenant(server, closed.slug, { authPolicy: 'PasswordlessOnly' })
    const before = await tenantSnapshot(server, closed.tenantId)
    const res = await server.request('POST', `/v1/${closed.slug}/auth/login`, {
      email: closed.adminEmail,
      password: closed.adminPassword,
    })
    expectError(res, 401, 'password_login_disabled')
    assert.deepEqual(await tenantSnapshot(server, closed.tenantId), before)
  })

  test('bad inputs are 400 validation and record nothing', async () => {
    const u = await signup(server, t.slug)
    const cases: [unknown, string][] = [
      [{ password: u.password }, 'body.email'],
      [{ email: u.email }, 'body.password'],
      [{}, 'body.email'],
      [{ email: u.email, password: '' }, 'body.password'],
      [{ email: u.email, password: 'p'.repeat(1025) }, 'body.password'],
      [{ email: u.email, password: 123456789012 }, 'body.password'],
      [{ email: u.email, password: [u.password] }, 'body.password'],
      [{ email: [u.email], password: u.password }, 'body.email'],
      [{ email: 7, password: u.password }, 'body.email'],
      [{ email: 'nobody', password: u.password }, 'body.email'],
      [{ email: `${'a'.repeat(250)}@x.io`, password: u.password }, 'body.email'],
      [{ email: u.email, password: u.password, totpCode: '12345' }, 'body.totpCode'],
      [{ email: u.email, password: u.password, totpCode: '1234567' }, 'body.totpCode'],
      [{ email: u.email, password: u.password, totpCode: 123456 }, 'body.totpCode'],
      [{ email: u.email, password: u.password, totpCode: 'abcdef' }, 'body.totpCode'],
      [{ email: u.email, password: u.password, emailOtpCode: '12 456' }, 'body.emailOtpCode'],
      [{ email: u.email, password: u.password, emailOtpCode: 654321 }, 'body.emailOtpCode'],
    ]
    const before = await tenantSnapshot(server, t.tenantId)
    for (const [body, field] of cases) expectValidation(await login(body), field)
    expectError(await login(undefined, { raw: '{"email":' }), 400, 'malformed_json')
    expectError(
      await login(undefined, {
        raw: `email=${u.email}&password=${u.password}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      400,
      'unsupported_media_type',
    )
    expectError(
      await login({ email: u.email, password: u.password, pad: 'x'.repeat(70_000) }),
      400,
      'body_too_large',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before, 'nothing recorded')
  })

  test('unknown properties in a login body are ignored', async () => {
    const u = await signup(server, t.slug)
    const res = await login({ email: u.email, password: u.password, role: 'Admin', tenantId: 'x' })
    assert.equal(res.status, 200)
    assert.equal(res.body.user.role, 'Member')
  })

  test('an unknown tenant is 404 before anything else', async () => {
    for (const body of [{ email: t.adminEmail, password: t.adminPassword }, { email: 5 }, {}]) {
      const res = await server.request('POST', '/v1/no-such-workspace/auth/login', body)
      expectError(res, 404, 'tenant_not_found')
    }
  })
})
