// CONTRACT §9, password reset: a mailed 6-digit code sets a new password and signs in;
// the checks run in order (body and password rules, code, second factor); every earlier
// session ends (§4); the address is proven and a Pending user becomes Active.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  actionsSince,
  auditMark,
  auditSince,
  codeRows,
  setTenant,
  setUser,
  unchanged,
  userRow,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { mailedResetCode, RESET } from '../../../test/fixtures/account.ts'
import { insertPendingUser } from '../../../test/fixtures/invites.ts'
import { enrolTotp, enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import { member, otherCode, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  randomIp,
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { and, eq, isNotNull } from '../../db/orm.ts'
import { recoveryCodes } from '../../db/schema.ts'
import { CODE_TTL_SECONDS } from '../codes/service.ts'

const NEW_PASSWORD = 'quartz-harbor-lantern-58'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const reset = (slug: string, body: unknown, ip?: string) =>
  server.request('POST', `/v1/${slug}/auth/reset-password`, body, { ip })
const login = (slug: string, email: string, password: string) =>
  server.request('POST', `/v1/${slug}/auth/login`, { email, password })

/** How many of the user's recovery codes are spent. */
async function spentRecoveryCodes(tenantId: string, userId: string) {
  const rows = await server.deps.db
    .select()
    .from(recoveryCodes)
    .where(
      and(
        eq(recoveryCodes.tenantId, tenantId),
        eq(recoveryCodes.userId, userId),
        isNotNull(recoveryCodes.usedAt),
      ),
    )
  return rows.length
}

/** A tenant (PasswordOnly, mfaPolicy Disabled unless given) and a member with a password. */
async function memberOf(policy: Parameters<typeof tenantWith>[1] = {}) {
  const t = await tenantWith(server, policy)
  return { t, u: await member(server, t.slug) }
}

describe('the reset', () => {
  test('sets the new password, proves the address and answers a token envelope', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const mark = await auditMark(server, t.tenantId)
    const res = await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, u.id)
    assert.equal(res.body.user.emailVerified, true)
    assert.equal(typeof res.body.accessToken, 'string')
    assert.equal(typeof res.body.refreshToken, 'string')
    assert.equal(res.body.accessTokenExpiresIn, 900)
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(me.status, 200)

    expectError(await login(t.slug, u.email, STRONG_PASSWORD), 401, 'invalid_credentials')
    assert.equal((await login(t.slug, u.email, NEW_PASSWORD)).status, 200)

    const events = await auditSince(server, t.tenantId, mark)
    const actions = events.map((e) => e.action)
    for (const action of [
      'UserPasswordChanged',
      'UserEmailVerified',
      'SessionRevoked',
      'SessionCreated',
      'UserLogin',
    ]) {
      assert.ok(actions.includes(action), `${action} in ${actions}`)
    }
    const changed = events.find((e) => e.action === 'UserPasswordChanged')
    assert.equal(changed?.userId, u.id)
    assert.equal(changed?.metadata.via, 'reset')
    assert.equal(events.find((e) => e.action === 'UserLogin')?.metadata.via, 'reset')
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.purpose, 'reset')
    assert.equal(row.closedReason, 'spent')
  })

  test('the code is spent: a second reset with it is 401 invalid_code', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    assert.equal(
      (await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })).status,
      200,
    )
    const again = await reset(t.slug, {
      email: u.email,
      code,
      newPassword: 'lilac-summit-kettle-90',
    })
    expectError(again, 401, 'invalid_code')
  })

  test('spent atomically: of parallel resets with one code exactly one succeeds', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const passwords = ['lilac-summit-kettle-90', 'amber-meadow-violin-42', NEW_PASSWORD]
    const answers = await Promise.all(
      passwords.map((newPassword) => reset(t.slug, { email: u.email, code, newPassword })),
    )
    const ok = answers.filter((a) => a.status === 200)
    assert.equal(ok.length, 1, JSON.stringify(answers.map((a) => a.status)))
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expectError(refused, 401, 'invalid_code')
    }
    const winner = passwords[answers.indexOf(ok[0])]
    assert.equal((await login(t.slug, u.email, winner)).status, 200)
  })

  test('every session that existed ends: old refresh tokens and access tokens are refused', async () => {
    const { t, u } = await memberOf()
    const other = await login(t.slug, u.email, STRONG_PASSWORD)
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const res = await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })
    assert.equal(res.status, 200)
    for (const old of [u, other.body]) {
      const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
        token: old.accessToken,
      })
      expectError(me, 401, 'session_revoked')
      const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
        refreshToken: old.refreshToken,
      })
      expectError(refreshed, 401, 'session_revoked')
    }
    // The new session lives.
    const fresh = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: res.body.refreshToken,
    })
    assert.equal(fresh.status, 200)
  })

  test('the security alert is mailed after the reset, without the code', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const count = sink.to(u.email).length
    assert.equal(
      (await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })).status,
      200,
    )
    // From a network the user has not signed in from, a new-device alert comes too, in
    // either order: the reset's own is looked for by its subject.
    const resetAlert = () =>
      sink
        .to(u.email)
        .slice(count)
        .find((m) => /^Security alert: your password was reset/.test(m.subject))
    for (let n = count + 1; !resetAlert() && n <= count + 2; n++) await sink.waitFor(u.email, n)
    const alert = resetAlert()
    assert.ok(alert, 'the reset alert')
    // (The slug and tenant name in it are random hex here, so only the code itself is checked.)
    assert.ok(!alert.text.includes(code) && !alert.html.includes(code), 'the code is not repeated')
  })

  test('a Pending user (a JIT sign-up that never finished) becomes Active', async () => {
    const t = await tenantWith(server, {})
    const email = uniqueEmail('pending')
    const id = await insertPendingUser(server, t.tenantId, email)
    const code = await mailedResetCode(server, sink, t.slug, email)
    const res = await reset(t.slug, { email, code, newPassword: NEW_PASSWORD })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.status, 'Active')
    const row = await userRow(server, t.tenantId, id)
    assert.equal(row.status, 'Active')
    assert.equal(row.emailVerified, true)
    assert.equal((await login(t.slug, email, NEW_PASSWORD)).status, 200)
  })

  test('PasswordResetRequested is recorded for a known user only', async () => {
    const { t, u } = await memberOf()
    const mark = await auditMark(server, t.tenantId)
    await mailedResetCode(server, sink, t.slug, u.email)
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.userId]),
      [['PasswordResetRequested', u.id]],
    )
    const ghost = await server.request('POST', `/v1/${t.slug}/${RESET}`, {
      email: uniqueEmail('ghost'),
    })
    assert.deepEqual(ghost.body, { ok: true })
    assert.equal((await auditSince(server, t.tenantId, mark)).length, 1)
  })

  test('the mail holds the 6-digit code alone in its text part', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const mail = sink.to(u.email).at(-1)
    assert.ok(mail)
    assert.match(mail.subject, /password reset code/)
    // The code comes first, alone on its line (the random tenant name may hold digits).
    assert.match(mail.text, new RegExp(`^Your code: ${code}\n`))
  })
})

describe('the order of the checks', () => {
  test('a weak password is 400 before the code is looked at: neither spent nor counted', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    for (const weak of ['password1234', u.email]) {
      const res = await unchanged(server, t.tenantId, () =>
        reset(t.slug, { email: u.email, code: otherCode(code), newPassword: weak }),
      )
      expectError(res, 400, 'password_too_weak')
    }
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.attempts, 0)
    assert.equal(
      (await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })).status,
      200,
    )
  })

  test('a password under 12 characters is 400 validation, nothing changed', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const res = await unchanged(server, t.tenantId, () =>
      reset(t.slug, { email: u.email, code, newPassword: 'short-1' }),
    )
    expectValidation(res, 'body.newPassword')
  })

  test('a wrong code is 401 invalid_code and counts; the 5th wrong guess burns the code', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    for (let i = 1; i <= 5; i++) {
      const res = await reset(t.slug, {
        email: u.email,
        code: otherCode(code, i),
        newPassword: NEW_PASSWORD,
      })
      expectError(res, 401, 'invalid_code')
    }
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.closedReason, 'burned')
    expectError(
      await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD }),
      401,
      'invalid_code',
    )
    expectError(await login(t.slug, u.email, NEW_PASSWORD), 401, 'invalid_credentials')
  })

  test('an expired code is 401 invalid_code (10 minutes, by the clock)', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    server.clock.advance(CODE_TTL_SECONDS)
    try {
      const res = await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })
      expectError(res, 401, 'invalid_code')
    } finally {
      server.clock.advance(-CODE_TTL_SECONDS)
    }
  })

  test('a new request voids the previous code', async () => {
    const { t, u } = await memberOf()
    const first = await mailedResetCode(server, sink, t.slug, u.email)
    const second = await mailedResetCode(server, sink, t.slug, u.email)
    if (first !== second) {
      const res = await reset(t.slug, { email: u.email, code: first, newPassword: NEW_PASSWORD })
      expectError(res, 401, 'invalid_code')
    }
    const ok = await reset(t.slug, { email: u.email, code: second, newPassword: NEW_PASSWORD })
    assert.equal(ok.status, 200)
  })

  test('a login code is not a reset code, nor a reset code a login code', async () => {
    const { t, u } = await memberOf({ authPolicy: 'PasswordAndPasswordless' })
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const asLogin = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email: u.email,
      code,
    })
    expectError(asLogin, 401, 'invalid_code')
    assert.equal(
      (await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })).status,
      200,
    )
  })

  test('an unknown address is 401 invalid_code and audited as a failed sign-in', async () => {
    const { t } = await memberOf()
    const email = uniqueEmail('ghost')
    const mark = await auditMark(server, t.tenantId)
    expectError(
      await reset(t.slug, { email, code: '123456', newPassword: NEW_PASSWORD }),
      401,
      'invalid_code',
    )
    const [failed] = await auditSince(server, t.tenantId, mark)
    assert.equal(failed.action, 'UserLoginFailed')
    assert.deepEqual(failed.metadata, {
      email,
      reason: 'invalid_code',
      via: 'reset',
      cause: 'unknown_address',
    })
  })

  test('a code of another tenant is 401 invalid_code there', async () => {
    const { t, u } = await memberOf()
    const other = await tenantWith(server, {})
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const res = await reset(other.slug, { email: u.email, code, newPassword: NEW_PASSWORD })
    expectError(res, 401, 'invalid_code')
  })
})

describe('the second factor', () => {
  test('a TOTP-enrolled user under Optional needs totpCode; the reset code stays valid meanwhile', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const body = { email: u.email, code, newPassword: NEW_PASSWORD }

    const asked = await reset(t.slug, body)
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['totp'])
    const wrong = await reset(t.slug, { ...body, totpCode: otherCode(totpAt(server, secret), 3) })
    expectError(wrong, 401, 'invalid_mfa_code')
    expectError(await login(t.slug, u.email, NEW_PASSWORD), 401, 'invalid_credentials')
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.closedAt, null, 'the reset code is still open')

    const mark = await auditMark(server, t.tenantId)
    const ok = await reset(t.slug, { ...body, totpCode: totpAt(server, secret) })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.ok((await actionsSince(server, t.tenantId, mark)).includes('MfaTotpVerified'))
  })

  test('a TOTP-enrolled user under Required needs totpCode too', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    await setTenant(server, t.slug, { mfaPolicy: 'Required' })
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const body = { email: u.email, code, newPassword: NEW_PASSWORD }
    expectError(await reset(t.slug, body), 401, 'mfa_required')
    assert.equal((await reset(t.slug, { ...body, totpCode: totpAt(server, secret) })).status, 200)
  })

  test('a user without TOTP needs nothing more, even under Required', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Required' })
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    assert.equal(
      (await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })).status,
      200,
    )
  })

  test('under Disabled a TOTP-enrolled user is asked nothing', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    await enrolTotp(server, t.slug, u.accessToken)
    await setTenant(server, t.slug, { mfaPolicy: 'Disabled' })
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    assert.equal(
      (await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })).status,
      200,
    )
  })

  test('a valid recovery code stands for totpCode: spent once (MfaRecoveryCodeUsed, 9 remaining), refused the second time', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const { recoveryCodes: codes } = await enrolWithRecoveryCodes(server, t.slug, u.accessToken)
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const mark = await auditMark(server, t.tenantId)
    const ok = await reset(t.slug, {
      email: u.email,
      code,
      newPassword: NEW_PASSWORD,
      recoveryCode: codes[0],
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.equal(ok.body.user.id, u.id)
    const used = (await auditSince(server, t.tenantId, mark)).filter(
      (e) => e.action === 'MfaRecoveryCodeUsed',
    )
    assert.deepEqual(
      used.map((e) => [e.userId, e.metadata]),
      [[u.id, { remaining: 9 }]],
    )

    // The same recovery code with a new reset code: refused, the password unchanged; the
    // reset code stays valid for another recovery code.
    const second = await mailedResetCode(server, sink, t.slug, u.email)
    const body = { email: u.email, code: second, newPassword: 'lilac-summit-kettle-90' }
    expectError(await reset(t.slug, { ...body, recoveryCode: codes[0] }), 401, 'invalid_mfa_code')
    expectError(await login(t.slug, u.email, body.newPassword), 401, 'invalid_credentials')
    assert.equal(await spentRecoveryCodes(t.tenantId, u.id), 1)
    const next = await reset(t.slug, { ...body, recoveryCode: codes[1] })
    assert.equal(next.status, 200, JSON.stringify(next.body))
  })

  test('a wrong recovery code is 401 invalid_mfa_code and the reset code stays valid', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const body = { email: u.email, code, newPassword: NEW_PASSWORD }
    expectError(
      await reset(t.slug, { ...body, recoveryCode: 'aaaaa-bbbbb' }),
      401,
      'invalid_mfa_code',
    )
    assert.equal((await reset(t.slug, { ...body, totpCode: totpAt(server, secret) })).status, 200)
  })

  test('totpCode and recoveryCode together are 400 validation; the code is neither spent nor counted', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const res = await unchanged(server, t.tenantId, () =>
      reset(t.slug, {
        email: u.email,
        code: otherCode(code),
        newPassword: NEW_PASSWORD,
        totpCode: totpAt(server, secret),
        recoveryCode: 'aaaaa-bbbbb',
      }),
    )
    expectValidation(res, 'body.recoveryCode')
  })
})

describe('policies and account states', () => {
  test('PasswordlessOnly: both routes answer 403 password_login_disabled, nothing mailed or changed', async () => {
    const { t, u } = await memberOf()
    await setTenant(server, t.slug, { authPolicy: 'PasswordlessOnly' })
    const asked = await unchanged(
      server,
      t.tenantId,
      () => server.request('POST', `/v1/${t.slug}/${RESET}`, { email: u.email }),
      { sink },
    )
    expectError(asked, 403, 'password_login_disabled')
    const res = await unchanged(server, t.tenantId, () =>
      reset(t.slug, { email: u.email, code: '123456', newPassword: NEW_PASSWORD }),
    )
    expectError(res, 403, 'password_login_disabled')
  })

  test('a user suspended after the request cannot use the code', async () => {
    const { t, u } = await memberOf()
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    await setUser(server, t.tenantId, u.id, { status: 'Suspended' })
    const res = await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD })
    expectError(res, 401, 'invalid_code')
    const row = await userRow(server, t.tenantId, u.id)
    assert.equal(row.status, 'Suspended')
  })

  test('a reset from one IP is audited with that IP', async () => {
    const { t, u } = await memberOf()
    const ip = randomIp()
    const code = await mailedResetCode(server, sink, t.slug, u.email, ip)
    const mark = await auditMark(server, t.tenantId)
    assert.equal(
      (await reset(t.slug, { email: u.email, code, newPassword: NEW_PASSWORD }, ip)).status,
      200,
    )
    const changed = (await auditSince(server, t.tenantId, mark)).find(
      (e) => e.action === 'UserPasswordChanged',
    )
    assert.equal(changed?.ip, ip)
  })
})
