// auth/totp/initial-enroll and auth/totp/initial-verify (SPEC notes 4 and 5; CONTRACT §5):
// enrolment before the first sign-in, proven by exactly one of a password or a login code.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  actionsSince,
  auditMark,
  codeRows,
  setTenant,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { enrolTotp, totpAt } from '../../../test/fixtures/mfa.ts'
import {
  mailedLoginCode,
  member,
  otherCode,
  tenantWith,
} from '../../../test/fixtures/passwordless.ts'
import {
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

const enroll = (slug: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/totp/initial-enroll`, body)
const verify = (slug: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/totp/initial-verify`, body)

describe('with a password', () => {
  test('enrol then verify signs in with TOTP active', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required', name: 'Initech' })
    const u = await member(server, t.slug)
    const begun = await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD })
    assert.equal(begun.status, 200, JSON.stringify(begun.body))
    assert.match(begun.body.otpauthUri, /^otpauth:\/\/totp\/Initech:/)
    assert.match(begun.body.qrCodeSvg, /^<svg/)
    assert.equal((await userByEmail(server, t.tenantId, u.email)).totpEnabled, false)

    const mark = await auditMark(server, t.tenantId)
    const done = await verify(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      code: totpAt(server, begun.body.secret),
    })
    assert.equal(done.status, 200, JSON.stringify(done.body))
    assert.equal(done.body.user.totpEnrolled, true)
    assert.equal(typeof done.body.accessToken, 'string')
    const actions = await actionsSince(server, t.tenantId, mark)
    assert.deepEqual(actions, ['MfaTotpEnrolled', 'MfaTotpVerified', 'SessionCreated', 'UserLogin'])
    // From now on the password login asks for TOTP.
    server.clock.advance(30)
    const asked = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: STRONG_PASSWORD,
    })
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['totp', 'email'])
  })

  test('SPEC note 5: the authenticator code is accepted as totpCode as well as code', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const begun = await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD })
    const done = await verify(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: totpAt(server, begun.body.secret),
    })
    assert.equal(done.status, 200, JSON.stringify(done.body))
  })

  test('Optional policy allows initial enrolment too', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Optional' })
    const u = await member(server, t.slug)
    const begun = await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD })
    assert.equal(begun.status, 200)
  })

  test('a wrong password: 401 invalid_credentials, unknown address alike, nothing stored', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await enroll(t.slug, { email: u.email, password: 'wrong-password-1' }),
      401,
      'invalid_credentials',
    )
    expectError(
      await enroll(t.slug, { email: uniqueEmail('ghost'), password: STRONG_PASSWORD }),
      401,
      'invalid_credentials',
    )
    const after = await tenantSnapshot(server, t.tenantId)
    assert.deepEqual(after.users, before.users)
    assert.deepEqual(after.sessions, before.sessions)
  })

  test('a wrong authenticator code: 401 invalid_mfa_code, TOTP stays inactive, no session', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const begun = await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD })
    const before = await tenantSnapshot(server, t.tenantId)
    const mark = await auditMark(server, t.tenantId)
    const res = await verify(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      code: otherCode(totpAt(server, begun.body.secret), 500_000),
    })
    expectError(res, 401, 'invalid_mfa_code')
    assert.deepEqual(await actionsSince(server, t.tenantId, mark), ['UserLoginFailed'])
    const after = await tenantSnapshot(server, t.tenantId)
    assert.deepEqual(after.users, before.users)
    assert.deepEqual(after.sessions, before.sessions)
  })

  test('verify without enrol first: 401 invalid_mfa_code', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const res = await verify(t.slug, { email: u.email, password: STRONG_PASSWORD, code: '123456' })
    expectError(res, 401, 'invalid_mfa_code')
  })

  test('409 already_enrolled when TOTP is active (after the first factor is proven)', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Optional' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD }),
      409,
      'already_enrolled',
    )
    const res = await verify(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      code: totpAt(server, secret),
    })
    expectError(res, 409, 'already_enrolled')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    // A wrong password learns nothing about enrolment.
    expectError(
      await enroll(t.slug, { email: u.email, password: 'wrong-password-1' }),
      401,
      'invalid_credentials',
    )
  })

  test('403 mfa_disabled when the policy is Disabled', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Disabled' })
    const u = await member(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD }),
      403,
      'mfa_disabled',
    )
    expectError(
      await verify(t.slug, { email: u.email, password: STRONG_PASSWORD, code: '123456' }),
      403,
      'mfa_disabled',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('SPEC note 9: PasswordlessOnly refuses the password here too', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required', authPolicy: 'PasswordlessOnly' })
    const u = await member(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD }),
      401,
      'password_login_disabled',
    )
    expectError(
      await verify(t.slug, { email: u.email, password: STRONG_PASSWORD, code: '123456' }),
      401,
      'password_login_disabled',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

describe('with a login code (SPEC note 4)', () => {
  test('a JIT member of a PasswordlessOnly tenant requiring MFA: enrol, verify, signed in and Active', async () => {
    const t = await tenantWith(server, {
      authPolicy: 'PasswordlessOnly',
      mfaPolicy: 'Required',
      passwordlessJitSignup: true,
    })
    const email = uniqueEmail('jit')
    const code = await mailedLoginCode(server, sink, t.slug, email)
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, { email, code }),
      401,
      'mfa_not_enrolled',
    )
    const begun = await enroll(t.slug, { email, loginCode: code })
    assert.equal(begun.status, 200, JSON.stringify(begun.body))
    // Checked at enrol, not spent.
    const [open] = await codeRows(
      server,
      t.tenantId,
      (await userByEmail(server, t.tenantId, email)).id,
    )
    assert.equal(open.closedAt, null)
    assert.equal((await userByEmail(server, t.tenantId, email)).status, 'Pending')

    const mark = await auditMark(server, t.tenantId)
    const done = await verify(t.slug, {
      email,
      loginCode: code,
      totpCode: totpAt(server, begun.body.secret),
    })
    assert.equal(done.status, 200, JSON.stringify(done.body))
    assert.equal(done.body.user.status, 'Active')
    assert.equal(done.body.user.totpEnrolled, true)
    assert.equal(done.body.user.emailVerified, true)
    const actions = await actionsSince(server, t.tenantId, mark)
    assert.deepEqual(actions, [
      'MfaTotpEnrolled',
      'MfaTotpVerified',
      'PasswordlessCodeVerified',
      'SessionCreated',
      'UserEmailVerified',
      'UserLogin',
    ])
    // The code was spent at verify.
    const [spent] = await codeRows(server, t.tenantId, done.body.user.id)
    assert.equal(spent.closedReason, 'spent')

    // Next time: a new code plus TOTP.
    server.clock.advance(30)
    const next = await mailedLoginCode(server, sink, t.slug, email)
    const signedIn = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email,
      code: next,
      totpCode: totpAt(server, begun.body.secret),
    })
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body))
  })

  test('a wrong login code: 401 invalid_code, counted against the code', async () => {
    const t = await tenantWith(server, {
      authPolicy: 'PasswordAndPasswordless',
      mfaPolicy: 'Required',
    })
    const u = await member(server, t.slug)
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await enroll(t.slug, { email: u.email, loginCode: otherCode(code) }),
      401,
      'invalid_code',
    )
    const after = await tenantSnapshot(server, t.tenantId)
    assert.deepEqual(after.users, before.users)
    assert.equal(after.codes[0].attempts, 1)
  })

  test('a wrong TOTP code at verify leaves the login code valid', async () => {
    const t = await tenantWith(server, {
      authPolicy: 'PasswordAndPasswordless',
      mfaPolicy: 'Required',
    })
    const u = await member(server, t.slug)
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    const begun = await enroll(t.slug, { email: u.email, loginCode: code })
    const res = await verify(t.slug, {
      email: u.email,
      loginCode: code,
      code: otherCode(totpAt(server, begun.body.secret), 500_000),
    })
    expectError(res, 401, 'invalid_mfa_code')
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.closedAt, null)
    const ok = await verify(t.slug, {
      email: u.email,
      loginCode: code,
      code: totpAt(server, begun.body.secret),
    })
    assert.equal(ok.status, 200)
  })

  test('PasswordOnly refuses a login code here: 403 passwordless_disabled', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    expectError(
      await enroll(t.slug, { email: u.email, loginCode: '123456' }),
      403,
      'passwordless_disabled',
    )
  })

  test('a login code of another user of the tenant does not enrol this one', async () => {
    const t = await tenantWith(server, {
      authPolicy: 'PasswordAndPasswordless',
      mfaPolicy: 'Required',
    })
    const alice = await member(server, t.slug)
    const bob = await member(server, t.slug)
    const aliceCode = await mailedLoginCode(server, sink, t.slug, alice.email)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await enroll(t.slug, { email: bob.email, loginCode: aliceCode }),
      401,
      'invalid_code',
    )
    assert.deepEqual((await tenantSnapshot(server, t.tenantId)).users, before.users)
  })
})

describe('exactly one of password or loginCode', () => {
  test('both, or neither: 400 validation, nothing changes', async () => {
    const t = await tenantWith(server, {
      authPolicy: 'PasswordAndPasswordless',
      mfaPolicy: 'Required',
    })
    const u = await member(server, t.slug)
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    const before = await tenantSnapshot(server, t.tenantId)
    for (const body of [
      { email: u.email, password: STRONG_PASSWORD, loginCode: code },
      { email: u.email },
    ]) {
      expectError(await enroll(t.slug, body), 400, 'validation')
      expectError(await verify(t.slug, { ...body, code: '123456' }), 400, 'validation')
    }
    expectError(
      await verify(t.slug, { email: u.email, password: STRONG_PASSWORD }),
      400,
      'validation',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

test('a policy switched to Disabled between enrol and verify is honoured at verify', async () => {
  const t = await tenantWith(server, { mfaPolicy: 'Optional' })
  const u = await member(server, t.slug)
  const begun = await enroll(t.slug, { email: u.email, password: STRONG_PASSWORD })
  await setTenant(server, t.slug, { mfaPolicy: 'Disabled' })
  expectError(
    await verify(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      code: totpAt(server, begun.body.secret),
    }),
    403,
    'mfa_disabled',
  )
})
