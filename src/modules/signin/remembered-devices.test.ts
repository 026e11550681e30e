// Remembered devices over the API (CONTRACT §21): tenant mfaRememberDays (0..90, default
// 0), `rememberDevice: true` with a second factor → `deviceToken`, sent back as
// `deviceToken` at login (password and emailed code) to skip the second factor for that
// many days; only its hash is stored; a token of another user or tenant, an expired or a
// forgotten one is no device; every ending (password change, reset, TOTP reset,
// logout-all, DELETE me/remembered-devices, mfaRememberDays set to 0) ends them; bad
// input is 400 and changes nothing.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditRows, tenantSnapshot, unchanged, userByEmail } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { mailedResetCode } from '../../../test/fixtures/account.ts'
import { enrolTotp, totpAt } from '../../../test/fixtures/mfa.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { eq } from '../../db/orm.ts'
import { rememberedDevices } from '../../db/schema.ts'
import { hashToken } from '../../lib/crypto.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const DAY = 86_400

async function patchTenant(t: TenantFixture, body: unknown) {
  return server.request('PATCH', `/v1/${t.slug}/tenant`, body, { token: t.admin.accessToken })
}

/** A tenant remembering devices for `days`, and a user of it with TOTP. */
async function setup(days = 30) {
  const t = await createTenant(server)
  const patched = await patchTenant(t, { mfaPolicy: 'Optional', mfaRememberDays: days })
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  assert.equal(patched.body.mfaRememberDays, days)
  const user = await withTotp(t)
  return { t, ...user }
}

async function withTotp(t: TenantFixture) {
  const email = uniqueEmail('device')
  const signed = await signup(server, t.slug, email)
  const secret = await enrolTotp(server, t.slug, signed.accessToken)
  return { email, secret, userId: signed.user.id as string }
}

function login(t: TenantFixture, body: Record<string, unknown>) {
  return server.request('POST', `/v1/${t.slug}/auth/login`, body, { ip: randomIp() })
}

/** A login with the TOTP code asking to remember the device: answers its deviceToken. */
async function remember(t: TenantFixture, email: string, secret: string): Promise<string> {
  server.clock.advance(30)
  const res = await login(t, {
    email,
    password: STRONG_PASSWORD,
    totpCode: totpAt(server, secret),
    rememberDevice: true,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.match(res.body.deviceToken, /^rd_[A-Za-z0-9_-]{43}$/)
  return res.body.deviceToken
}

/** Whether the token skips the second factor now (else the answer is mfa_required). */
async function skips(t: TenantFixture, email: string, deviceToken: string): Promise<boolean> {
  const res = await login(t, { email, password: STRONG_PASSWORD, deviceToken })
  if (res.status === 200) {
    assert.equal(res.body.deviceToken, undefined, 'a remembered sign-in mints no new token')
    return true
  }
  expectError(res, 401, 'mfa_required')
  return false
}

describe('remembering a device', () => {
  test('a second factor with rememberDevice gives a deviceToken that skips it; only the hash is kept; audited', async () => {
    const { t, email, secret, userId } = await setup()
    const token = await remember(t, email, secret)
    const rows = await server.deps.db
      .select()
      .from(rememberedDevices)
      .where(eq(rememberedDevices.tenantId, t.tenantId))
    assert.equal(rows.length, 1)
    assert.equal(rows[0].userId, userId)
    assert.equal(rows[0].tokenHash, hashToken(token))
    assert.ok(!JSON.stringify(rows).includes(token), 'the token itself is not stored')
    assert.equal(
      rows[0].expiresAt.getTime() - rows[0].createdAt.getTime(),
      30 * DAY * 1000,
      'for the tenant’s mfaRememberDays',
    )
    assert.equal(await skips(t, email, token), true)
    assert.equal(await skips(t, email, token), true, 'used again and again')
    const logins = (await auditRows(server, t.tenantId, 'UserLogin')).filter(
      (r) => r.userId === userId,
    )
    assert.ok(logins.some((r) => r.metadata.deviceRemembered === true))
    assert.equal(logins.filter((r) => r.metadata.rememberedDevice === true).length, 2)
    // Without a token the second factor is asked as before.
    expectError(await login(t, { email, password: STRONG_PASSWORD }), 401, 'mfa_required')
    // The password still counts: a wrong one with the token is invalid_credentials.
    const wrong = await login(t, { email, password: 'wrong-password-1', deviceToken: token })
    expectError(wrong, 401, 'invalid_credentials')
  })

  test('no token without rememberDevice, nor where the tenant remembers none (0, the default)', async () => {
    const { t, email, secret } = await setup()
    server.clock.advance(30)
    const plain = await login(t, {
      email,
      password: STRONG_PASSWORD,
      totpCode: totpAt(server, secret),
    })
    assert.equal(plain.status, 200)
    assert.equal(plain.body.deviceToken, undefined)

    const off = await createTenant(server)
    const tenant = (
      await server.request('GET', `/v1/${off.slug}/tenant`, undefined, {
        token: off.admin.accessToken,
      })
    ).body
    assert.equal(tenant.mfaRememberDays, 0, 'off by default')
    await patchTenant(off, { mfaPolicy: 'Optional' })
    const u = await withTotp(off)
    const asked = await login(off, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: totpAt(server, u.secret),
      rememberDevice: true,
    })
    assert.equal(asked.status, 200)
    assert.equal(asked.body.deviceToken, undefined)
    // A sign-in that asked no second factor remembers nothing either.
    const member = await signup(server, t.slug)
    const noMfa = await login(t, {
      email: member.user.email,
      password: STRONG_PASSWORD,
      rememberDevice: true,
    })
    assert.equal(noMfa.status, 200)
    assert.equal(noMfa.body.deviceToken, undefined)
  })

  test('a token of another user, of another tenant, made up or expired is no device', async () => {
    const { t, email, secret } = await setup(7)
    const token = await remember(t, email, secret)
    const other = await withTotp(t)
    assert.equal(await skips(t, other.email, token), false, 'another user’s')
    const elsewhere = await setup(7)
    const theirs = await remember(elsewhere.t, elsewhere.email, elsewhere.secret)
    assert.equal(await skips(t, email, theirs), false, 'another tenant’s')
    assert.equal(await skips(t, email, `rd_${'A'.repeat(43)}`), false, 'made up')
    assert.equal(await skips(t, email, 'not-a-device-token'), false, 'not even one')
    // Seven days later it has expired.
    server.clock.advance(7 * DAY + 1)
    assert.equal(await skips(t, email, token), false, 'expired')
    // Lowering the setting shortens the devices remembered before.
    const fresh = await remember(t, email, secret)
    assert.equal((await patchTenant(t, { mfaRememberDays: 1 })).status, 200)
    server.clock.advance(DAY + 1)
    assert.equal(await skips(t, email, fresh), false, 'older than the new setting')
  })

  test('the emailed-code sign-in skips its second factor with a remembered device too', async () => {
    const { t, email, secret } = await setup()
    await patchTenant(t, { authPolicy: 'PasswordAndPasswordless' })
    const token = await remember(t, email, secret)
    await server.deps.mailer.drain()
    const before = sink.to(email).length
    const asked = await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email })
    assert.equal(asked.status, 200)
    const code = await sink.codeAfter(email, before)
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/auth/verify-login-code`,
      { email, code, deviceToken: token },
      { ip: randomIp() },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })

  test('totp/initial-verify with rememberDevice (a first enrolment under Required) gives a deviceToken too; without it none', async () => {
    const t = await createTenant(server)
    const patched = await patchTenant(t, { mfaPolicy: 'Required', mfaRememberDays: 30 })
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    const enrol = async (rememberDevice?: boolean) => {
      const email = uniqueEmail('first-enrol')
      await signup(server, t.slug, email)
      const started = await server.request(
        'POST',
        `/v1/${t.slug}/auth/totp/initial-enroll`,
        { email, password: STRONG_PASSWORD },
        { ip: randomIp() },
      )
      assert.equal(started.status, 200, JSON.stringify(started.body))
      const verified = await server.request(
        'POST',
        `/v1/${t.slug}/auth/totp/initial-verify`,
        {
          email,
          password: STRONG_PASSWORD,
          code: totpAt(server, started.body.secret),
          ...(rememberDevice === undefined ? {} : { rememberDevice }),
        },
        { ip: randomIp() },
      )
      assert.equal(verified.status, 200, JSON.stringify(verified.body))
      assert.equal(verified.body.recoveryCodes.length, 10)
      return { email, deviceToken: verified.body.deviceToken as string | undefined }
    }
    const remembered = await enrol(true)
    assert.match(remembered.deviceToken ?? '', /^rd_[A-Za-z0-9_-]{43}$/)
    assert.equal(await skips(t, remembered.email, remembered.deviceToken as string), true)
    const userId = (await userByEmail(server, t.tenantId, remembered.email))?.id
    const logins = (await auditRows(server, t.tenantId, 'UserLogin')).filter(
      (r) => r.userId === userId,
    )
    assert.equal(logins.filter((r) => r.metadata.deviceRemembered === true).length, 1)
    for (const choice of [undefined, false]) {
      const plain = await enrol(choice)
      assert.equal(plain.deviceToken, undefined, `rememberDevice ${choice}: no token`)
    }
  })

  test('bad input is 400 and changes nothing', async () => {
    const { t, email } = await setup()
    for (const [body, path] of [
      [{ email, password: STRONG_PASSWORD, deviceToken: '' }, 'body.deviceToken'],
      [{ email, password: STRONG_PASSWORD, deviceToken: 'x'.repeat(201) }, 'body.deviceToken'],
      [{ email, password: STRONG_PASSWORD, deviceToken: 42 }, 'body.deviceToken'],
      [{ email, password: STRONG_PASSWORD, rememberDevice: 'yes' }, 'body.rememberDevice'],
    ] as const) {
      const res = await unchanged(server, t.tenantId, () => login(t, body))
      expectValidation(res, path)
    }
    for (const value of [-1, 91, 1.5, '7', null]) {
      const res = await unchanged(server, t.tenantId, () =>
        patchTenant(t, { mfaRememberDays: value }),
      )
      expectValidation(res, 'body.mfaRememberDays')
    }
    const member = await signup(server, t.slug)
    const refused = await unchanged(server, t.tenantId, () =>
      server.request(
        'PATCH',
        `/v1/${t.slug}/tenant`,
        { mfaRememberDays: 5 },
        {
          token: member.accessToken,
        },
      ),
    )
    expectError(refused, 403, 'admin_required')
    const anonymous = await unchanged(server, t.tenantId, () =>
      server.request('DELETE', `/v1/${t.slug}/me/remembered-devices`),
    )
    assert.equal(anonymous.status, 401)
  })
})

describe('what ends remembered devices', () => {
  test('DELETE me/remembered-devices forgets the user’s (not another’s), audited with the count', async () => {
    const { t, email, secret, userId } = await setup()
    const a = await remember(t, email, secret)
    const b = await remember(t, email, secret)
    const other = await withTotp(t)
    const theirs = await remember(t, other.email, other.secret)
    const signedIn = await login(t, { email, password: STRONG_PASSWORD, deviceToken: a })
    const res = await server.request('DELETE', `/v1/${t.slug}/me/remembered-devices`, undefined, {
      token: signedIn.body.accessToken,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true, count: 2 })
    assert.equal(await skips(t, email, a), false)
    assert.equal(await skips(t, email, b), false)
    assert.equal(await skips(t, other.email, theirs), true, 'another user keeps theirs')
    const forgotten = (await auditRows(server, t.tenantId, 'RememberedDevicesForgotten')).filter(
      (r) => r.userId === userId,
    )
    assert.deepEqual(
      forgotten.map((r) => r.metadata),
      [{ count: 2, reason: 'forgotten' }],
    )
  })

  test('a password change, logout-all and a TOTP reset each end them', async () => {
    const { t, email, secret, userId } = await setup()
    // A password change.
    let token = await remember(t, email, secret)
    const session = await login(t, { email, password: STRONG_PASSWORD, deviceToken: token })
    const changed = await server.request(
      'PATCH',
      `/v1/${t.slug}/me/password`,
      { currentPassword: STRONG_PASSWORD, newPassword: 'violet-anchor-meadow-93' },
      { token: session.body.accessToken },
    )
    assert.equal(changed.status, 200, JSON.stringify(changed.body))
    const next = { email, password: 'violet-anchor-meadow-93', deviceToken: token }
    expectError(await login(t, next), 401, 'mfa_required')
    // Back to the usual password, for the helpers.
    server.clock.advance(30)
    const again = await login(t, { ...next, totpCode: totpAt(server, secret) })
    await server.request(
      'PATCH',
      `/v1/${t.slug}/me/password`,
      { currentPassword: 'violet-anchor-meadow-93', newPassword: STRONG_PASSWORD },
      { token: again.body.accessToken },
    )
    // Logout-all.
    token = await remember(t, email, secret)
    const s2 = await login(t, { email, password: STRONG_PASSWORD, deviceToken: token })
    const out = await server.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, {
      token: s2.body.accessToken,
    })
    assert.equal(out.status, 200)
    assert.equal(await skips(t, email, token), false, 'after logout-all')
    // An admin's TOTP reset (and the user enrols again).
    token = await remember(t, email, secret)
    const reset = await server.request(
      'POST',
      `/v1/${t.slug}/users/${userId}/totp/disable`,
      undefined,
      { token: t.admin.accessToken },
    )
    assert.equal(reset.status, 200, JSON.stringify(reset.body))
    await patchTenant(t, { mfaPolicy: 'Required' })
    const res = await login(t, { email, password: STRONG_PASSWORD, deviceToken: token })
    expectError(res, 401, 'mfa_required')
    const reasons = (await auditRows(server, t.tenantId, 'RememberedDevicesForgotten'))
      .filter((r) => r.userId === userId)
      .map((r) => r.metadata.reason)
      .sort()
    // The second change found no device to forget: audited only when there was one.
    assert.deepEqual(reasons, ['logout-all', 'password-changed', 'totp-reset'])
  })

  test('a password reset ends them', async () => {
    const { t, email, secret } = await setup()
    const token = await remember(t, email, secret)
    const code = await mailedResetCode(server, sink, t.slug, email)
    server.clock.advance(30)
    const res = await server.request('POST', `/v1/${t.slug}/auth/reset-password`, {
      email,
      code,
      newPassword: 'copper-lantern-willow-41',
      totpCode: totpAt(server, secret),
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const next = { email, password: 'copper-lantern-willow-41', deviceToken: token }
    expectError(await login(t, next), 401, 'mfa_required')
  })

  test('mfaRememberDays set to 0 forgets every device of the tenant; turned on again they stay gone', async () => {
    const { t, email, secret } = await setup()
    const token = await remember(t, email, secret)
    const other = await withTotp(t)
    const theirs = await remember(t, other.email, other.secret)
    const elsewhere = await setup()
    const kept = await remember(elsewhere.t, elsewhere.email, elsewhere.secret)
    const before = await tenantSnapshot(server, elsewhere.t.tenantId)
    assert.equal((await patchTenant(t, { mfaRememberDays: 0 })).status, 200)
    const rows = await server.deps.db
      .select()
      .from(rememberedDevices)
      .where(eq(rememberedDevices.tenantId, t.tenantId))
    assert.deepEqual(rows, [])
    assert.equal((await patchTenant(t, { mfaRememberDays: 30 })).status, 200)
    assert.equal(await skips(t, email, token), false)
    assert.equal(await skips(t, other.email, theirs), false)
    assert.deepEqual(await tenantSnapshot(server, elsewhere.t.tenantId), before)
    assert.equal(await skips(elsewhere.t, elsewhere.email, kept), true, 'another tenant’s stay')
    const user = await userByEmail(server, t.tenantId, email)
    assert.ok(user)
  })
})
