// CONTRACT §9, email verification: a mailed code proves the address of the signed-in user
// (a token) or signs in a stranger who gives `{ email, code }`; a Pending user becomes
// Active; an address already verified is sent nothing.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  auditMark,
  auditSince,
  codeRows,
  setTenant,
  setUser,
  unchanged,
  userRow,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { mailedVerifyCode, VERIFY_REQUEST } from '../../../test/fixtures/account.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import { insertPendingUser } from '../../../test/fixtures/invites.ts'
import { enrolTotp, enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import { member, otherCode, tenantWith } from '../../../test/fixtures/passwordless.ts'
import { startTestServer, type TestServer, uniqueEmail } from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { CODE_TTL_SECONDS } from '../codes/service.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const verify = (slug: string, body: unknown, token?: string) =>
  server.request('POST', `/v1/${slug}/auth/verify-email`, body, { token })
const ask = (slug: string, body: unknown, token?: string) =>
  server.request('POST', `/v1/${slug}/${VERIFY_REQUEST}`, body, { token })

async function memberOf(policy: Parameters<typeof tenantWith>[1] = {}) {
  const t = await tenantWith(server, policy)
  return { t, u: await member(server, t.slug) }
}

describe('signed in (a user token)', () => {
  test('the code proves the address and answers the user as GET /me does', async () => {
    const { t, u } = await memberOf()
    assert.equal(u.user.emailVerified, false)
    const code = await mailedVerifyCode(server, sink, t.slug, u.email, u.accessToken)
    const mail = sink.to(u.email).at(-1)
    assert.match(mail?.subject ?? '', /^Confirm your email address/)
    // The code comes first, alone on its line (the random tenant name may hold digits).
    assert.match(mail?.text ?? '', new RegExp(`^Your code: ${code}\n`))

    const mark = await auditMark(server, t.tenantId)
    const res = await verify(t.slug, { code }, u.accessToken)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })
    assert.deepEqual(res.body, me.body, 'the shape and values of GET /me')
    assert.equal(res.body.emailVerified, true)
    assert.equal(res.body.tenant.slug, t.slug)
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.userId, e.metadata.via]),
      [['UserEmailVerified', u.id, 'email-verification']],
    )
    const [row] = await codeRows(server, t.tenantId, u.id)
    assert.equal(row.purpose, 'verify')
    assert.equal(row.closedReason, 'spent')
  })

  test('an address already verified gets ok and no mail, and nothing changes', async () => {
    const { t, u } = await memberOf()
    await setUser(server, t.tenantId, u.id, { emailVerified: true })
    const res = await unchanged(server, t.tenantId, () => ask(t.slug, {}, u.accessToken), {
      sink,
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })
  })

  test('a wrong code is 401 invalid_code; the 5th wrong guess burns it', async () => {
    const { t, u } = await memberOf()
    const code = await mailedVerifyCode(server, sink, t.slug, u.email, u.accessToken)
    for (let i = 1; i <= 5; i++) {
      expectError(
        await verify(t.slug, { code: otherCode(code, i) }, u.accessToken),
        401,
        'invalid_code',
      )
    }
    expectError(await verify(t.slug, { code }, u.accessToken), 401, 'invalid_code')
    const row = await userRow(server, t.tenantId, u.id)
    assert.equal(row.emailVerified, false)
    const [codeRow] = await codeRows(server, t.tenantId, u.id)
    assert.equal(codeRow.closedReason, 'burned')
  })

  test('an expired code is 401 invalid_code (10 minutes, by the clock)', async () => {
    const { t, u } = await memberOf()
    const code = await mailedVerifyCode(server, sink, t.slug, u.email, u.accessToken)
    server.clock.advance(CODE_TTL_SECONDS)
    try {
      expectError(await verify(t.slug, { code }, u.accessToken), 401, 'invalid_code')
    } finally {
      server.clock.advance(-CODE_TTL_SECONDS)
    }
  })

  test('with a token, email, totpCode or recoveryCode in the body is 400 validation', async () => {
    const { t, u } = await memberOf()
    const code = await mailedVerifyCode(server, sink, t.slug, u.email, u.accessToken)
    for (const [field, value] of [
      ['email', u.email],
      ['totpCode', '123456'],
      ['recoveryCode', 'aaaaa-bbbbb'],
    ]) {
      const res = await unchanged(server, t.tenantId, () =>
        verify(t.slug, { code, [field]: value }, u.accessToken),
      )
      expectValidation(res, `body.${field}`)
    }
    const asked = await unchanged(
      server,
      t.tenantId,
      () => ask(t.slug, { email: u.email }, u.accessToken),
      { sink },
    )
    expectValidation(asked, 'body.email')
  })

  test('a token that is sent must be valid: it never falls back to anonymous', async () => {
    const { t, u } = await memberOf()
    for (const token of ['not-a-jwt', `${u.accessToken}x`]) {
      expectError(
        await verify(t.slug, { email: u.email, code: '123456' }, token),
        401,
        'token_invalid',
      )
      expectError(await ask(t.slug, { email: u.email }, token), 401, 'token_invalid')
    }
    await server.request('POST', `/v1/${t.slug}/auth/logout`, { refreshToken: u.refreshToken })
    expectError(await ask(t.slug, {}, u.accessToken), 401, 'session_revoked')
  })

  test("another tenant's token is 401 token_invalid", async () => {
    const { t } = await memberOf()
    const other = await memberOf()
    expectError(await ask(t.slug, {}, other.u.accessToken), 401, 'token_invalid')
    expectError(await verify(t.slug, { code: '123456' }, other.u.accessToken), 401, 'token_invalid')
  })

  test('an API key is 401 user_token_required', async () => {
    const { t } = await memberOf()
    const key = (await createKey(server, t.slug, t.admin.accessToken)).plaintext
    expectError(await ask(t.slug, {}, key), 401, 'user_token_required')
    expectError(await verify(t.slug, { code: '123456' }, key), 401, 'user_token_required')
  })
})

describe('without a token', () => {
  test('`{ email, code }` signs in with a token envelope and proves the address', async () => {
    const { t, u } = await memberOf()
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    const mark = await auditMark(server, t.tenantId)
    const res = await verify(t.slug, { email: u.email, code })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, u.id)
    assert.equal(res.body.user.emailVerified, true)
    assert.equal(typeof res.body.accessToken, 'string')
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(events.map((e) => e.action).sort(), [
      'SessionCreated',
      'UserEmailVerified',
      'UserLogin',
    ])
    assert.equal(events.find((e) => e.action === 'UserLogin')?.metadata.via, 'email-verification')
    // Earlier sessions are not touched.
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })
    assert.equal(me.status, 200)
  })

  test('a Pending user becomes Active', async () => {
    const t = await tenantWith(server, {})
    const email = uniqueEmail('pending')
    const id = await insertPendingUser(server, t.tenantId, email)
    const code = await mailedVerifyCode(server, sink, t.slug, email)
    const res = await verify(t.slug, { email, code })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.status, 'Active')
    const row = await userRow(server, t.tenantId, id)
    assert.deepEqual([row.status, row.emailVerified], ['Active', true])
  })

  test('a wrong code, an unknown address and a suspended user are 401 invalid_code', async () => {
    const { t, u } = await memberOf()
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    expectError(
      await verify(t.slug, { email: u.email, code: otherCode(code) }),
      401,
      'invalid_code',
    )
    expectError(await verify(t.slug, { email: uniqueEmail('ghost'), code }), 401, 'invalid_code')
    await setUser(server, t.tenantId, u.id, { status: 'Suspended' })
    expectError(await verify(t.slug, { email: u.email, code }), 401, 'invalid_code')
  })

  test('a TOTP-enrolled user under Optional needs totpCode; the code stays valid meanwhile', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    const asked = await verify(t.slug, { email: u.email, code })
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['totp'])
    const wrong = await verify(t.slug, {
      email: u.email,
      code,
      totpCode: otherCode(totpAt(server, secret), 3),
    })
    expectError(wrong, 401, 'invalid_mfa_code')
    const badRecovery = await verify(t.slug, { email: u.email, code, recoveryCode: 'aaaaa-bbbbb' })
    expectError(badRecovery, 401, 'invalid_mfa_code')
    const ok = await verify(t.slug, { email: u.email, code, totpCode: totpAt(server, secret) })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test('a TOTP-enrolled user under Required is asked mfa_required with methods ["totp"]', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    await setTenant(server, t.slug, { mfaPolicy: 'Required' })
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    const asked = await verify(t.slug, { email: u.email, code })
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['totp'])
    assert.equal((await userRow(server, t.tenantId, u.id)).emailVerified, false)
    const ok = await verify(t.slug, { email: u.email, code, totpCode: totpAt(server, secret) })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test('a user without TOTP needs nothing more, even under Required (as for the reset)', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Required' })
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    const res = await verify(t.slug, { email: u.email, code })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.emailVerified, true)
  })

  test('a valid recovery code stands for totpCode: spent once (MfaRecoveryCodeUsed, 9 remaining), refused the second time', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const { recoveryCodes: codes } = await enrolWithRecoveryCodes(server, t.slug, u.accessToken)
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    const mark = await auditMark(server, t.tenantId)
    const ok = await verify(t.slug, { email: u.email, code, recoveryCode: codes[0] })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.equal(ok.body.user.emailVerified, true)
    const used = (await auditSince(server, t.tenantId, mark)).filter(
      (e) => e.action === 'MfaRecoveryCodeUsed',
    )
    assert.deepEqual(
      used.map((e) => [e.userId, e.metadata]),
      [[u.id, { remaining: 9 }]],
    )

    // The same recovery code with a new verification code (the address unproven again):
    // refused; the verification code stays valid for another recovery code.
    await setUser(server, t.tenantId, u.id, { emailVerified: false })
    const second = await mailedVerifyCode(server, sink, t.slug, u.email)
    const again = await verify(t.slug, { email: u.email, code: second, recoveryCode: codes[0] })
    expectError(again, 401, 'invalid_mfa_code')
    assert.equal((await userRow(server, t.tenantId, u.id)).emailVerified, false)
    const next = await verify(t.slug, { email: u.email, code: second, recoveryCode: codes[1] })
    assert.equal(next.status, 200, JSON.stringify(next.body))
  })

  test('totpCode and recoveryCode together are 400 validation, nothing changed', async () => {
    const { t, u } = await memberOf({ mfaPolicy: 'Optional' })
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    const res = await unchanged(server, t.tenantId, () =>
      verify(t.slug, { email: u.email, code, totpCode: '123456', recoveryCode: 'aaaaa-bbbbb' }),
    )
    expectValidation(res, 'body.recoveryCode')
  })

  test('without email the body is 400 validation, nothing changed or mailed', async () => {
    const { t } = await memberOf()
    expectValidation(
      await unchanged(server, t.tenantId, () => verify(t.slug, { code: '123456' })),
      'body.email',
    )
    const asked = await unchanged(server, t.tenantId, () => ask(t.slug, {}), { sink })
    expectValidation(asked, 'body.email')
  })

  test('works whatever the authPolicy (the mailed code is the email factor)', async () => {
    for (const authPolicy of ['PasswordOnly', 'PasswordlessOnly'] as const) {
      const { t, u } = await memberOf()
      await setTenant(server, t.slug, { authPolicy })
      const code = await mailedVerifyCode(server, sink, t.slug, u.email)
      assert.equal((await verify(t.slug, { email: u.email, code })).status, 200, authPolicy)
    }
  })

  test('a verification code is not a reset code', async () => {
    const { t, u } = await memberOf()
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    const res = await server.request('POST', `/v1/${t.slug}/auth/reset-password`, {
      email: u.email,
      code,
      newPassword: 'quartz-harbor-lantern-58',
    })
    expectError(res, 401, 'invalid_code')
  })
})
