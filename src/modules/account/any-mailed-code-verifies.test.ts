// CONTRACT §9: "Verifying any mailed code (login code, email OTP, reset, invite) also marks
// the address verified." One test per way a mailed secret reaches the address, each
// starting from an unverified user and ending with emailVerified and one UserEmailVerified.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { auditMark, auditSince, setTenant, userByEmail } from '../../../test/db.ts'
import { mailedResetCode } from '../../../test/fixtures/account.ts'
import { insertPendingUser } from '../../../test/fixtures/invites.ts'
import { mailedEmailOtp, totpAt } from '../../../test/fixtures/mfa.ts'
import { mailedLoginCode, member, tenantWith } from '../../../test/fixtures/passwordless.ts'
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

/** Asserts the address is now verified, with one UserEmailVerified (of `via`) since `mark`. */
async function assertVerified(tenantId: string, email: string, mark: Set<string>, via: string) {
  const user = await userByEmail(server, tenantId, email)
  assert.equal(user.emailVerified, true, 'the address is marked verified')
  const events = (await auditSince(server, tenantId, mark)).filter(
    (e) => e.action === 'UserEmailVerified',
  )
  assert.deepEqual(
    events.map((e) => [e.userId, e.metadata.via]),
    [[user.id, via]],
  )
}

test('a login code marks the address verified', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const u = await member(server, t.slug)
  assert.equal(u.user.emailVerified, false)
  const code = await mailedLoginCode(server, sink, t.slug, u.email)
  const mark = await auditMark(server, t.tenantId)
  const res = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
    email: u.email,
    code,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.user.emailVerified, true)
  await assertVerified(t.tenantId, u.email, mark, 'passwordless')
})

test('a login code spent by auth/totp/initial-verify marks the address verified', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const u = await member(server, t.slug)
  await setTenant(server, t.slug, { mfaPolicy: 'Required' })
  const loginCode = await mailedLoginCode(server, sink, t.slug, u.email)
  const begun = await server.request('POST', `/v1/${t.slug}/auth/totp/initial-enroll`, {
    email: u.email,
    loginCode,
  })
  assert.equal(begun.status, 200, JSON.stringify(begun.body))
  const mark = await auditMark(server, t.tenantId)
  const done = await server.request('POST', `/v1/${t.slug}/auth/totp/initial-verify`, {
    email: u.email,
    loginCode,
    code: totpAt(server, begun.body.secret),
  })
  assert.equal(done.status, 200, JSON.stringify(done.body))
  await assertVerified(t.tenantId, u.email, mark, 'passwordless')
})

test('an email OTP marks the address verified', async () => {
  const t = await tenantWith(server, {})
  const u = await member(server, t.slug)
  await setTenant(server, t.slug, { mfaPolicy: 'Required' })
  const emailOtpCode = await mailedEmailOtp(server, sink, t.slug, u.email)
  const mark = await auditMark(server, t.tenantId)
  const res = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: u.email,
    password: u.password,
    emailOtpCode,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  await assertVerified(t.tenantId, u.email, mark, 'email-otp')
})

test('a password reset code marks the address verified', async () => {
  const t = await tenantWith(server, {})
  const u = await member(server, t.slug)
  const code = await mailedResetCode(server, sink, t.slug, u.email)
  const mark = await auditMark(server, t.tenantId)
  const res = await server.request('POST', `/v1/${t.slug}/auth/reset-password`, {
    email: u.email,
    code,
    newPassword: 'quartz-harbor-lantern-58',
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  await assertVerified(t.tenantId, u.email, mark, 'reset')
})

test('an invitation accepted marks the address verified, a new user and a Pending one alike', async () => {
  const t = await tenantWith(server, {})
  const pendingEmail = uniqueEmail('pending')
  await insertPendingUser(server, t.tenantId, pendingEmail)
  for (const email of [uniqueEmail('invitee'), pendingEmail]) {
    const invited = await server.request(
      'POST',
      `/v1/${t.slug}/invites`,
      { email, sendEmail: false },
      { token: t.admin.accessToken },
    )
    assert.equal(invited.status, 200, JSON.stringify(invited.body))
    const mark = await auditMark(server, t.tenantId)
    const res = await server.request('POST', '/v1/invites/accept', {
      token: invited.body.token,
      password: STRONG_PASSWORD,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.emailVerified, true)
    await assertVerified(t.tenantId, email, mark, 'invite')
  }
})
