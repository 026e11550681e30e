// Passwordless endpoint notes 2 (invalid_code), 8 (just-in-time signup) and 9 (authPolicy),
// and GET auth/config, through HTTP against the real database, with codes from real mail.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  auditMark,
  auditSince,
  setTenant,
  setUser,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { mailedLoginCode, member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  randomIp,
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const verify = (slug: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/verify-login-code`, body, { ip: randomIp() })

describe('SPEC note 2: invalid_code for wrong, expired and unknown', () => {
  test('an address without an account, and one without a code, answer invalid_code', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
    const u = await member(server, t.slug)
    const beforeRows = await tenantSnapshot(server, t.tenantId)
    expectError(
      await verify(t.slug, { email: uniqueEmail('ghost'), code: '123456' }),
      401,
      'invalid_code',
    )
    expectError(await verify(t.slug, { email: u.email, code: '123456' }), 401, 'invalid_code')
    const afterRows = await tenantSnapshot(server, t.tenantId)
    assert.deepEqual(afterRows.users, beforeRows.users)
    assert.deepEqual(afterRows.codes, beforeRows.codes)
    assert.deepEqual(afterRows.sessions, beforeRows.sessions)
    const known = new Set(beforeRows.audit.map((e) => e.id))
    const failed = afterRows.audit.filter((e) => !known.has(e.id))
    assert.deepEqual(failed.map((e) => e.action).sort(), [
      'PasswordlessCodeFailed',
      'PasswordlessCodeFailed',
      'UserLoginFailed',
      'UserLoginFailed',
    ])
  })

  test('a suspended user cannot verify a code issued before the suspension', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
    const u = await member(server, t.slug)
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    await setUser(server, t.tenantId, u.id, { status: 'Suspended' })
    const beforeRows = await tenantSnapshot(server, t.tenantId)
    expectError(await verify(t.slug, { email: u.email, code }), 401, 'invalid_code')
    assert.deepEqual((await tenantSnapshot(server, t.tenantId)).sessions, beforeRows.sessions)
  })

  test('the address is matched case-insensitively after trimming', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
    const u = await member(server, t.slug)
    const padded = `  ${u.email.toUpperCase()} `
    const res0 = await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, {
      email: padded,
    })
    assert.deepEqual(res0.body, { ok: true })
    const code = await sink.codeAfter(u.email, 0)
    const res = await verify(t.slug, { email: u.email.toUpperCase(), code })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })
})

describe('SPEC note 8: just-in-time signup', () => {
  test('passwordlessJitSignup true: an unknown address becomes a Pending member, Active at its first verified code', async () => {
    const t = await tenantWith(server, {
      authPolicy: 'PasswordlessOnly',
      passwordlessJitSignup: true,
    })
    const email = uniqueEmail('jit')
    const since = await auditMark(server, t.tenantId)
    const code = await mailedLoginCode(server, sink, t.slug, email)
    const pending = await userByEmail(server, t.tenantId, email)
    assert.equal(pending.status, 'Pending')
    assert.equal(pending.role, 'Member')
    assert.equal(pending.passwordHash, null)
    assert.equal(pending.emailVerified, false)
    const sent = await auditSince(server, t.tenantId, since)
    assert.deepEqual(sent.map((e) => e.action).sort(), ['PasswordlessCodeSent', 'UserSignup'])
    assert.equal(sent.find((e) => e.action === 'UserSignup')?.metadata.via, 'passwordless')

    const since2 = await auditMark(server, t.tenantId)
    const res = await verify(t.slug, { email, code })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.status, 'Active')
    assert.equal(res.body.user.role, 'Member')
    assert.equal(res.body.user.emailVerified, true)
    const active = await userByEmail(server, t.tenantId, email)
    assert.equal(active.status, 'Active')
    assert.ok(active.lastLoginAt)
    const events = await auditSince(server, t.tenantId, since2)
    assert.equal(events.find((e) => e.action === 'UserLogin')?.metadata.via, 'passwordless')
    assert.ok(events.some((e) => e.action === 'UserEmailVerified'))
  })

  test('a second request before the first code is used reuses the Pending member', async () => {
    const t = await tenantWith(server, {
      authPolicy: 'PasswordAndPasswordless',
      passwordlessJitSignup: true,
    })
    const email = uniqueEmail('jit')
    await mailedLoginCode(server, sink, t.slug, email)
    const code = await mailedLoginCode(server, sink, t.slug, email)
    const rows = await tenantSnapshot(server, t.tenantId)
    assert.equal(rows.users.filter((r) => r.emailNormalized === email).length, 1)
    assert.equal(rows.audit.filter((e) => e.action === 'UserSignup' && e.email === email).length, 1)
    assert.equal((await verify(t.slug, { email, code })).status, 200)
  })

  test('passwordlessJitSignup false (default): no user, no mail, no error', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordlessOnly' })
    const email = uniqueEmail('nobody')
    const beforeRows = await tenantSnapshot(server, t.tenantId)
    const res = await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })
    await server.deps.mailer.drain()
    assert.equal(sink.to(email).length, 0)
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), beforeRows)
  })
})

describe('authPolicy (SPEC note 9)', () => {
  test('PasswordOnly: request-login-code and verify-login-code answer 403 passwordless_disabled', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordOnly' })
    const u = await member(server, t.slug)
    const beforeRows = await tenantSnapshot(server, t.tenantId)
    const req = await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, {
      email: u.email,
    })
    expectError(req, 403, 'passwordless_disabled')
    expectError(
      await verify(t.slug, { email: u.email, code: '123456' }),
      403,
      'passwordless_disabled',
    )
    await server.deps.mailer.drain()
    assert.equal(sink.to(u.email).length, 0)
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), beforeRows)
  })

  test('a code issued before the tenant went PasswordOnly no longer signs in', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
    const u = await member(server, t.slug)
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    await setTenant(server, t.slug, { authPolicy: 'PasswordOnly' })
    expectError(await verify(t.slug, { email: u.email, code }), 403, 'passwordless_disabled')
  })

  test('PasswordAndPasswordless: both the password and an emailed code sign in', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
    const u = await member(server, t.slug)
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(login.status, 200)
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    assert.equal((await verify(t.slug, { email: u.email, code })).status, 200)
  })

  test('PasswordlessOnly: password login and password signup are refused, codes sign in', async () => {
    const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
    const u = await member(server, t.slug)
    await setTenant(server, t.slug, { authPolicy: 'PasswordlessOnly' })
    const beforeRows = await tenantSnapshot(server, t.tenantId)
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: STRONG_PASSWORD,
    })
    expectError(login, 401, 'password_login_disabled')
    const newcomer = uniqueEmail('new')
    const signup = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: newcomer,
      password: STRONG_PASSWORD,
    })
    assert.equal(signup.status, 400)
    assert.equal(signup.body.details.reason, 'password_login_disabled')
    const afterRows = await tenantSnapshot(server, t.tenantId)
    assert.deepEqual(afterRows.users, beforeRows.users)
    assert.deepEqual(afterRows.sessions, beforeRows.sessions)
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    assert.equal((await verify(t.slug, { email: u.email, code })).status, 200)
  })
})

describe('GET auth/config', () => {
  test('answers the authPolicy, idpOauthEnabled and the §9 settings, and follows a change', async () => {
    const t = await tenantWith(server, {})
    const first = await server.request('GET', `/v1/${t.slug}/auth/config`)
    assert.equal(first.status, 200)
    // CONTRACT §9 adds passkeysEnabled and requireVerifiedEmail to auth/config.
    const defaults = {
      idpOauthEnabled: false,
      passkeysEnabled: true,
      requireVerifiedEmail: false,
      captcha: null,
    }
    assert.deepEqual(first.body, { authPolicy: 'PasswordOnly', ...defaults })
    await setTenant(server, t.slug, { authPolicy: 'PasswordlessOnly' })
    const second = await server.request('GET', `/v1/${t.slug}/auth/config`)
    assert.deepEqual(second.body, { authPolicy: 'PasswordlessOnly', ...defaults })
  })

  test('an unknown tenant answers 404', async () => {
    expectError(
      await server.request('GET', '/v1/no-such-tenant-x/auth/config'),
      404,
      'tenant_not_found',
    )
  })
})
