// CONTRACT §9, tenant setting requireVerifiedEmail: a password sign-in of an unverified
// address is 403 email_not_verified after the password was checked and before any second
// factor (existing sessions untouched); signup creates the user without a session, mails
// a verification code, and auth/verify-email with `{ email, code }` then signs in.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditMark, auditSince, setTenant, setUser, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { mailedVerifyCode } from '../../../test/fixtures/account.ts'
import { enrolTotp, totpAt } from '../../../test/fixtures/mfa.ts'
import { member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  GENEROUS_LIMITS,
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
  server = await startTestServer(t, {
    smtpUrl: sink.url,
    // Two password failures per (tenant, email, IP): a try kept would show at the third.
    limits: { ...GENEROUS_LIMITS, loginFailures: { points: 2, seconds: 900 } },
  })
})
after(async () => {
  await sink.stop()
})

const login = (slug: string, body: Record<string, unknown>, ip?: string) =>
  server.request('POST', `/v1/${slug}/auth/login`, body, { ip })
const signupRequest = (slug: string, email: string) =>
  server.request('POST', `/v1/${slug}/auth/signup`, { email, password: STRONG_PASSWORD })

/** A tenant requiring verified addresses, with a member signed up before it did. */
async function unverifiedMember(policy: Parameters<typeof tenantWith>[1] = {}) {
  const t = await tenantWith(server, policy)
  const u = await member(server, t.slug)
  await setTenant(server, t.slug, { requireVerifiedEmail: true })
  return { t, u }
}

describe('password sign-in', () => {
  test('the right password of an unverified address is 403 email_not_verified, audited', async () => {
    const { t, u } = await unverifiedMember()
    const mark = await auditMark(server, t.tenantId)
    const res = await login(t.slug, { email: u.email, password: u.password })
    expectError(res, 403, 'email_not_verified')
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.userId, e.metadata.reason]),
      [['UserLoginFailed', u.id, 'email_not_verified']],
    )
  })

  test('a wrong password is still 401 invalid_credentials: the address state is not told', async () => {
    const { t, u } = await unverifiedMember()
    expectError(
      await login(t.slug, { email: u.email, password: 'not-the-password' }),
      401,
      'invalid_credentials',
    )
  })

  test('it answers before any second factor is asked', async () => {
    const { t, u } = await unverifiedMember({ mfaPolicy: 'Optional' })
    await setTenant(server, t.slug, { requireVerifiedEmail: false })
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    await setTenant(server, t.slug, { requireVerifiedEmail: true, mfaPolicy: 'Required' })
    expectError(
      await login(t.slug, { email: u.email, password: u.password }),
      403,
      'email_not_verified',
    )
    const withTotp = await login(t.slug, {
      email: u.email,
      password: u.password,
      totpCode: totpAt(server, secret),
    })
    expectError(withTotp, 403, 'email_not_verified')
  })

  test('the try is given back: the refusals do not use up the password budget', async () => {
    const { t, u } = await unverifiedMember()
    const ip = randomIp()
    for (let i = 0; i < 3; i++) {
      expectError(
        await login(t.slug, { email: u.email, password: u.password }, ip),
        403,
        'email_not_verified',
      )
    }
    await setUser(server, t.tenantId, u.id, { emailVerified: true })
    assert.equal((await login(t.slug, { email: u.email, password: u.password }, ip)).status, 200)
  })

  test('existing sessions are not touched', async () => {
    const { t, u } = await unverifiedMember()
    expectError(
      await login(t.slug, { email: u.email, password: u.password }),
      403,
      'email_not_verified',
    )
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })
    assert.equal(me.status, 200)
    const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: u.refreshToken,
    })
    assert.equal(refreshed.status, 200)
  })

  test('a verified address signs in; so does anyone once the setting is off', async () => {
    const { t, u } = await unverifiedMember()
    await setTenant(server, t.slug, { requireVerifiedEmail: false })
    assert.equal((await login(t.slug, { email: u.email, password: u.password })).status, 200)
    await setTenant(server, t.slug, { requireVerifiedEmail: true })
    const code = await mailedVerifyCode(server, sink, t.slug, u.email, u.accessToken)
    const verified = await server.request(
      'POST',
      `/v1/${t.slug}/auth/verify-email`,
      { code },
      {
        token: u.accessToken,
      },
    )
    assert.equal(verified.status, 200)
    assert.equal((await login(t.slug, { email: u.email, password: u.password })).status, 200)
  })

  test('request-email-otp and initial-enroll (password sign-in steps) answer 403 too', async () => {
    const { t, u } = await unverifiedMember({ mfaPolicy: 'Required' })
    const otp = await server.request('POST', `/v1/${t.slug}/auth/request-email-otp`, {
      email: u.email,
      password: u.password,
    })
    expectError(otp, 403, 'email_not_verified')
    const enrol = await server.request('POST', `/v1/${t.slug}/auth/totp/initial-enroll`, {
      email: u.email,
      password: u.password,
    })
    expectError(enrol, 403, 'email_not_verified')
  })

  test('a login code proves the address by itself and still signs in', async () => {
    const { t, u } = await unverifiedMember({ authPolicy: 'PasswordAndPasswordless' })
    await server.deps.mailer.drain()
    const before = sink.to(u.email).length
    await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email: u.email })
    const code = await sink.codeAfter(u.email, before)
    const res = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email: u.email,
      code,
    })
    assert.equal(res.status, 200)
    assert.equal(res.body.user.emailVerified, true)
  })
})

describe('signup', () => {
  test('answers { ok, verificationRequired } without tokens, creates the user and mails a code', async () => {
    const t = await tenantWith(server, {})
    await setTenant(server, t.slug, { requireVerifiedEmail: true })
    const email = uniqueEmail('new')
    await server.deps.mailer.drain()
    const mark = await auditMark(server, t.tenantId)
    const res = await signupRequest(t.slug, email)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true, verificationRequired: true })
    const user = await userByEmail(server, t.tenantId, email)
    assert.deepEqual([user.status, user.emailVerified], ['Active', false])
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.metadata.verificationRequired]),
      [['UserSignup', true]],
      'no session was created',
    )
    const mail = await sink.waitFor(email, 1)
    assert.match(mail.subject, /^Confirm your email address/)

    // The password alone does not sign in...
    expectError(
      await login(t.slug, { email, password: STRONG_PASSWORD }),
      403,
      'email_not_verified',
    )
    // ...the mailed code does, and then the password does too.
    const code = SmtpSink.code(mail)
    const verified = await server.request('POST', `/v1/${t.slug}/auth/verify-email`, {
      email,
      code,
    })
    assert.equal(verified.status, 200, JSON.stringify(verified.body))
    assert.equal(verified.body.user.emailVerified, true)
    assert.equal(typeof verified.body.accessToken, 'string')
    assert.equal((await login(t.slug, { email, password: STRONG_PASSWORD })).status, 200)
  })

  test('an address already taken is still 400 email_taken', async () => {
    const { t, u } = await unverifiedMember()
    expectError(await signupRequest(t.slug, u.email), 400, 'email_taken')
  })

  test('without the setting, signup answers a token envelope as before', async () => {
    const t = await tenantWith(server, {})
    const res = await signupRequest(t.slug, uniqueEmail())
    assert.equal(res.status, 200)
    assert.equal(typeof res.body.accessToken, 'string')
    assert.equal(res.body.user.emailVerified, false)
  })

  test('auth/config tells clients about the setting', async () => {
    const { t } = await unverifiedMember()
    const res = await server.request('GET', `/v1/${t.slug}/auth/config`)
    assert.equal(res.body.requireVerifiedEmail, true)
  })
})
