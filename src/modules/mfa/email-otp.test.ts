// Email OTP as the second factor of a password login (SPEC note 7; CONTRACT §5):
// request-email-otp checks the password first, mails a code valid 10 minutes, burned by
// the 5th wrong guess, rate limited like login codes; audited as MfaEmailOtp*, never as
// Passwordless*.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  actionsSince,
  auditMark,
  auditSince,
  codeRows,
  setTenant,
  setUser,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { enrolTotp, mailedEmailOtp } from '../../../test/fixtures/mfa.ts'
import {
  mailedLoginCode,
  member,
  otherCode,
  tenantWith,
} from '../../../test/fixtures/passwordless.ts'
import {
  GENEROUS_LIMITS,
  randomIp,
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { DEFAULT_LIMITS } from '../../lib/limits.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, {
    smtpUrl: sink.url,
    limits: {
      ...GENEROUS_LIMITS,
      codeRequestsPerEmail: DEFAULT_LIMITS.codeRequestsPerEmail,
      codeRequestsPerIp: DEFAULT_LIMITS.codeRequestsPerIp,
    },
  })
})
after(async () => {
  await sink.stop()
})

const login = (slug: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/login`, body)
const requestOtp = (slug: string, body: Record<string, unknown>, ip = randomIp()) =>
  server.request('POST', `/v1/${slug}/auth/request-email-otp`, body, { ip })

describe('the email factor of a password login', () => {
  test('request-email-otp mails a code naming the tenant; login with emailOtpCode signs in', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required', name: 'Globex' })
    const u = await member(server, t.slug)
    const asked = await login(t.slug, { email: u.email, password: STRONG_PASSWORD })
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['email'])

    const mark = await auditMark(server, t.tenantId)
    const code = await mailedEmailOtp(server, sink, t.slug, u.email)
    const mail = sink.to(u.email).at(-1)
    assert.match(mail?.subject ?? '', /Globex/)
    assert.match(mail?.text ?? '', /Globex/)
    const sent = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      sent.map((e) => e.action),
      ['MfaEmailOtpSent'],
    )
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.purpose, 'mfa')
    assert.ok(!row.codeHash.includes(code))

    const mark2 = await auditMark(server, t.tenantId)
    const ok = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      emailOtpCode: code,
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.equal(ok.body.user.emailVerified, true, 'the OTP proved the address')
    const actions = await actionsSince(server, t.tenantId, mark2)
    assert.deepEqual(actions, [
      'MfaEmailOtpVerified',
      'SessionCreated',
      'UserEmailVerified',
      'UserLogin',
    ])
    assert.ok(
      !actions.some((a) => a.startsWith('Passwordless')),
      'MFA is not filed as passwordless',
    )

    // Spent: the same code does not sign in twice.
    expectError(
      await login(t.slug, { email: u.email, password: STRONG_PASSWORD, emailOtpCode: code }),
      401,
      'invalid_mfa_code',
    )
  })

  test('an enrolled user may choose the email factor instead of TOTP', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    await enrolTotp(server, t.slug, u.accessToken)
    const code = await mailedEmailOtp(server, sink, t.slug, u.email)
    const ok = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      emailOtpCode: code,
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test('valid for 10 minutes: accepted at 9 min 59 s, refused at 10 min', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const code = await mailedEmailOtp(server, sink, t.slug, u.email)
    server.clock.advance(10 * 60)
    expectError(
      await login(t.slug, { email: u.email, password: STRONG_PASSWORD, emailOtpCode: code }),
      401,
      'invalid_mfa_code',
    )
    const fresh = await mailedEmailOtp(server, sink, t.slug, u.email)
    server.clock.advance(10 * 60 - 1)
    const ok = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      emailOtpCode: fresh,
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test('the 5th wrong guess burns the code; each failure is MfaEmailOtpFailed and UserLoginFailed', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const code = await mailedEmailOtp(server, sink, t.slug, u.email)
    const mark = await auditMark(server, t.tenantId)
    for (let i = 1; i <= 5; i++) {
      const res = await login(t.slug, {
        email: u.email,
        password: STRONG_PASSWORD,
        emailOtpCode: otherCode(code, i),
      })
      expectError(res, 401, 'invalid_mfa_code')
    }
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.attempts, 5)
    assert.equal(row.closedReason, 'burned')
    expectError(
      await login(t.slug, { email: u.email, password: STRONG_PASSWORD, emailOtpCode: code }),
      401,
      'invalid_mfa_code',
    )
    const events = await auditSince(server, t.tenantId, mark)
    assert.equal(events.filter((e) => e.action === 'MfaEmailOtpFailed').length, 6)
    const failed = events.filter((e) => e.action === 'UserLoginFailed')
    assert.equal(failed.length, 6)
    assert.ok(failed.every((e) => e.metadata.reason === 'invalid_mfa_code'))
    assert.ok(!events.some((e) => e.action.startsWith('Passwordless')))
  })

  test('four wrong guesses leave it valid', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const code = await mailedEmailOtp(server, sink, t.slug, u.email)
    for (let i = 1; i <= 4; i++) {
      const res = await login(t.slug, {
        email: u.email,
        password: STRONG_PASSWORD,
        emailOtpCode: otherCode(code, i),
      })
      expectError(res, 401, 'invalid_mfa_code')
    }
    const ok = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      emailOtpCode: code,
    })
    assert.equal(ok.status, 200)
  })

  test('a new email OTP supersedes the previous one', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const first = await mailedEmailOtp(server, sink, t.slug, u.email)
    const second = await mailedEmailOtp(server, sink, t.slug, u.email)
    if (first !== second) {
      expectError(
        await login(t.slug, { email: u.email, password: STRONG_PASSWORD, emailOtpCode: first }),
        401,
        'invalid_mfa_code',
      )
    }
    const ok = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      emailOtpCode: second,
    })
    assert.equal(ok.status, 200)
  })

  test('an email OTP and a login code never stand in for each other', async () => {
    const t = await tenantWith(server, {
      mfaPolicy: 'Required',
      authPolicy: 'PasswordAndPasswordless',
    })
    const u = await member(server, t.slug)
    const otp = await mailedEmailOtp(server, sink, t.slug, u.email)
    const loginCode = await mailedLoginCode(server, sink, t.slug, u.email)
    // The email OTP is not a login code ...
    if (otp !== loginCode) {
      expectError(
        await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
          email: u.email,
          code: otp,
        }),
        401,
        'invalid_code',
      )
      // ... and the login code is not an email OTP.
      expectError(
        await login(t.slug, { email: u.email, password: STRONG_PASSWORD, emailOtpCode: loginCode }),
        401,
        'invalid_mfa_code',
      )
    }
    const rows = await codeRows(server, t.tenantId, u.id)
    assert.deepEqual(rows.map((r) => r.purpose).sort(), ['login', 'mfa'])
  })

  test('an email OTP of another user does not work', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const alice = await member(server, t.slug)
    const bob = await member(server, t.slug)
    const aliceCode = await mailedEmailOtp(server, sink, t.slug, alice.email)
    await mailedEmailOtp(server, sink, t.slug, bob.email)
    const before = await tenantSnapshot(server, t.tenantId)
    const res = await login(t.slug, {
      email: bob.email,
      password: STRONG_PASSWORD,
      emailOtpCode: aliceCode,
    })
    const bobCode = (await codeRows(server, t.tenantId, bob.id))[0]
    if (res.status !== 200) expectError(res, 401, 'invalid_mfa_code')
    else assert.fail('a code of Alice signed Bob in')
    assert.deepEqual((await tenantSnapshot(server, t.tenantId)).sessions, before.sessions)
    assert.equal(bobCode.attempts, 1)
  })
})

describe('request-email-otp', () => {
  test('a wrong password or unknown address: 401 invalid_credentials, no mail, no code', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const ghost = uniqueEmail('ghost')
    const before = await tenantSnapshot(server, t.tenantId)
    const mark = await auditMark(server, t.tenantId)
    expectError(
      await requestOtp(t.slug, { email: u.email, password: 'wrong-password-1' }),
      401,
      'invalid_credentials',
    )
    expectError(
      await requestOtp(t.slug, { email: ghost, password: STRONG_PASSWORD }),
      401,
      'invalid_credentials',
    )
    await server.deps.mailer.drain()
    assert.equal(sink.to(u.email).length, 0)
    assert.equal(sink.to(ghost).length, 0)
    const after = await tenantSnapshot(server, t.tenantId)
    assert.deepEqual(after.codes, before.codes)
    assert.deepEqual(await actionsSince(server, t.tenantId, mark), [
      'UserLoginFailed',
      'UserLoginFailed',
    ])
  })

  test('a suspended user: 401 account_suspended, no mail', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    await setUser(server, t.tenantId, u.id, { status: 'Suspended' })
    expectError(
      await requestOtp(t.slug, { email: u.email, password: STRONG_PASSWORD }),
      401,
      'account_suspended',
    )
    await server.deps.mailer.drain()
    assert.equal(sink.to(u.email).length, 0)
  })

  test('SPEC note 9: PasswordlessOnly refuses the password: 401 password_login_disabled', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required', authPolicy: 'PasswordlessOnly' })
    const u = await member(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await requestOtp(t.slug, { email: u.email, password: STRONG_PASSWORD }),
      401,
      'password_login_disabled',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('no mail when the policy asks this user for no second factor', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Disabled' })
    const u = await member(server, t.slug)
    const res = await requestOtp(t.slug, { email: u.email, password: STRONG_PASSWORD })
    assert.deepEqual(res.body, { ok: true })
    await setTenant(server, t.slug, { mfaPolicy: 'Optional' })
    assert.deepEqual(
      (await requestOtp(t.slug, { email: u.email, password: STRONG_PASSWORD })).body,
      { ok: true },
    )
    await server.deps.mailer.drain()
    assert.equal(sink.to(u.email).length, 0)
    assert.equal((await codeRows(server, t.tenantId, u.id)).length, 0)
  })

  test('rate limited like login codes: 3 per 15 minutes per address', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await requestOtp(t.slug, { email: u.email, password: STRONG_PASSWORD })).status,
        200,
      )
    }
    await sink.waitFor(u.email, 3)
    const refused = await requestOtp(t.slug, { email: u.email, password: STRONG_PASSWORD })
    expectError(refused, 429, 'rate_limited')
    await server.deps.mailer.drain()
    assert.equal(sink.to(u.email).length, 3)
  })

  test('rate limited like login codes: 10 per minute per IP', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const ip = randomIp()
    const users = []
    for (let i = 0; i < 11; i++) users.push(await member(server, t.slug))
    for (const u of users.slice(0, 10)) {
      assert.equal(
        (await requestOtp(t.slug, { email: u.email, password: STRONG_PASSWORD }, ip)).status,
        200,
      )
    }
    expectError(
      await requestOtp(t.slug, { email: users[10].email, password: STRONG_PASSWORD }, ip),
      429,
      'rate_limited',
    )
    assert.equal(
      (await requestOtp(t.slug, { email: users[10].email, password: STRONG_PASSWORD })).status,
      200,
    )
  })
})

test('email is not offered on verify-login-code: a JIT member without TOTP gets mfa_not_enrolled', async () => {
  const t = await tenantWith(server, {
    mfaPolicy: 'Required',
    authPolicy: 'PasswordlessOnly',
    passwordlessJitSignup: true,
  })
  const email = uniqueEmail('jit')
  const code = await mailedLoginCode(server, sink, t.slug, email)
  const res = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
    email,
    code,
    emailOtpCode: '123456',
  })
  expectError(res, 401, 'mfa_not_enrolled')
  assert.equal((await userByEmail(server, t.tenantId, email)).status, 'Pending')
})
