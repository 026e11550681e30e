// TOTP (SPEC, MFA; CONTRACT §5): two-step enrolment with a Bearer token, the second factor
// of a password login (SPEC note 6), RFC 6238 windows on the injectable clock, and the
// rule that an accepted time step is never accepted again.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Secret, TOTP } from 'otpauth'
import {
  actionsSince,
  auditMark,
  setTenant,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { enrolTotp, totpAt } from '../../../test/fixtures/mfa.ts'
import { member, otherCode, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
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

const login = (slug: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/login`, body)

describe('enrolment with a Bearer token (mfa/totp/enroll, mfa/totp/verify)', () => {
  test('enroll answers a base32 secret, the otpauth URI of CONTRACT §5 and an SVG QR code', async () => {
    const t = await createTenant(server, { name: 'Acme & Co' })
    const u = await member(server, t.slug)
    const res = await server.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, {
      token: u.accessToken,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body).sort(), ['otpauthUri', 'qrCodeSvg', 'secret'])
    assert.match(res.body.secret, /^[A-Z2-7]{32}$/, '160 bits in base32')
    assert.equal(
      res.body.otpauthUri,
      `otpauth://totp/Acme%20%26%20Co:${encodeURIComponent(u.email)}?secret=${res.body.secret}&issuer=Acme%20%26%20Co`,
    )
    assert.match(res.body.qrCodeSvg, /^<svg[\s\S]*<\/svg>\s*$/)
    // Not active until verified.
    const row = await userByEmail(server, t.tenantId, u.email)
    assert.equal(row.totpEnabled, false)
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })
    assert.equal(me.body.totpEnrolled, false)
  })

  test('verify with a code from the authenticator activates the factor', async () => {
    const t = await createTenant(server)
    const u = await member(server, t.slug)
    const mark = await auditMark(server, t.tenantId)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    assert.match(secret, /^[A-Z2-7]+$/)
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })
    assert.equal(me.body.totpEnrolled, true)
    assert.deepEqual(await actionsSince(server, t.tenantId, mark), [
      'MfaTotpEnrolled',
      'MfaTotpVerified',
    ])
  })

  test('a wrong code does not activate the factor', async () => {
    const t = await createTenant(server)
    const u = await member(server, t.slug)
    const begun = await server.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, {
      token: u.accessToken,
    })
    const before = await tenantSnapshot(server, t.tenantId)
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code: otherCode(totpAt(server, begun.body.secret), 500_000) },
      { token: u.accessToken },
    )
    expectError(res, 401, 'invalid_mfa_code')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('verify without a pending enrolment is 401 invalid_mfa_code', async () => {
    const t = await createTenant(server)
    const u = await member(server, t.slug)
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code: '123456' },
      { token: u.accessToken },
    )
    expectError(res, 401, 'invalid_mfa_code')
  })

  test('a second enroll before verification replaces the pending secret', async () => {
    const t = await createTenant(server)
    const u = await member(server, t.slug)
    const enroll = () =>
      server.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, { token: u.accessToken })
    const first = (await enroll()).body.secret
    const second = (await enroll()).body.secret
    assert.notEqual(first, second)
    const stale = await server.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code: totpAt(server, first) },
      { token: u.accessToken },
    )
    if (totpAt(server, first) !== totpAt(server, second))
      expectError(stale, 401, 'invalid_mfa_code')
    const ok = await server.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code: totpAt(server, second) },
      { token: u.accessToken },
    )
    assert.equal(ok.status, 200)
  })

  test('enroll and verify while TOTP is active answer 409 already_enrolled, and the secret stays', async () => {
    const t = await createTenant(server)
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const before = await tenantSnapshot(server, t.tenantId)
    const again = await server.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, {
      token: u.accessToken,
    })
    expectError(again, 409, 'already_enrolled')
    const verify = await server.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code: totpAt(server, secret) },
      { token: u.accessToken },
    )
    expectError(verify, 409, 'already_enrolled')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('both routes need a user access token of this tenant', async () => {
    const t1 = await createTenant(server)
    const t2 = await createTenant(server)
    const before = await tenantSnapshot(server, t2.tenantId)
    expectError(
      await server.request('POST', `/v1/${t2.slug}/mfa/totp/enroll`),
      401,
      'token_missing',
    )
    const cross = await server.request('POST', `/v1/${t2.slug}/mfa/totp/enroll`, undefined, {
      token: t1.admin.accessToken,
    })
    expectError(cross, 401, 'token_invalid')
    const crossVerify = await server.request(
      'POST',
      `/v1/${t2.slug}/mfa/totp/verify`,
      { code: '123456' },
      { token: t1.admin.accessToken },
    )
    expectError(crossVerify, 401, 'token_invalid')
    assert.deepEqual(await tenantSnapshot(server, t2.tenantId), before)
  })
})

describe('password login with TOTP (SPEC note 6; CONTRACT §5)', () => {
  test('Required: no second factor answers mfa_required with ["totp","email"] for an enrolled user', async () => {
    const t = await createTenant(server)
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    await setTenant(server, t.slug, { mfaPolicy: 'Required' })
    const before = await tenantSnapshot(server, t.tenantId)
    const asked = await login(t.slug, { email: u.email, password: STRONG_PASSWORD })
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['totp', 'email'])
    assert.deepEqual((await tenantSnapshot(server, t.tenantId)).sessions, before.sessions)
    const mark = await auditMark(server, t.tenantId)
    const ok = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: totpAt(server, secret),
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.equal(ok.body.user.totpEnrolled, true)
    const actions = await actionsSince(server, t.tenantId, mark)
    assert.deepEqual(actions, ['MfaTotpVerified', 'SessionCreated', 'UserLogin'])
  })

  test('Required: a user without TOTP is offered ["email"] only', async () => {
    const t = await createTenant(server)
    const u = await member(server, t.slug)
    await setTenant(server, t.slug, { mfaPolicy: 'Required' })
    const asked = await login(t.slug, { email: u.email, password: STRONG_PASSWORD })
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['email'])
    // A TOTP code from a user without TOTP is simply wrong.
    const res = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: '123456',
    })
    expectError(res, 401, 'invalid_mfa_code')
  })

  test('Optional: asked only of enrolled users; Disabled: never asked', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Optional' })
    const enrolled = await member(server, t.slug)
    await enrolTotp(server, t.slug, enrolled.accessToken)
    const plain = await member(server, t.slug)
    expectError(
      await login(t.slug, { email: enrolled.email, password: STRONG_PASSWORD }),
      401,
      'mfa_required',
    )
    assert.equal(
      (await login(t.slug, { email: plain.email, password: STRONG_PASSWORD })).status,
      200,
    )
    await setTenant(server, t.slug, { mfaPolicy: 'Disabled' })
    assert.equal(
      (await login(t.slug, { email: enrolled.email, password: STRONG_PASSWORD })).status,
      200,
    )
  })

  test('a wrong TOTP code is 401 invalid_mfa_code, audited as UserLoginFailed, no session', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const before = await tenantSnapshot(server, t.tenantId)
    const mark = await auditMark(server, t.tenantId)
    const res = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: otherCode(totpAt(server, secret), 500_000),
    })
    expectError(res, 401, 'invalid_mfa_code')
    assert.deepEqual(await actionsSince(server, t.tenantId, mark), ['UserLoginFailed'])
    assert.deepEqual((await tenantSnapshot(server, t.tenantId)).sessions, before.sessions)
  })

  test('a TOTP code with a wrong password is invalid_credentials and does not spend the step', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const totpCode = totpAt(server, secret)
    const res = await login(t.slug, { email: u.email, password: 'not-the-password', totpCode })
    expectError(res, 401, 'invalid_credentials')
    const ok = await login(t.slug, { email: u.email, password: STRONG_PASSWORD, totpCode })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })
})

describe('RFC 6238 windows on the injectable clock', () => {
  test('codes of the previous and next step are accepted, two steps away are not', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const attempt = (steps: number) =>
      login(t.slug, {
        email: u.email,
        password: STRONG_PASSWORD,
        totpCode: totpAt(server, secret, steps),
      })
    // Far from the last accepted step, so only the window decides.
    server.clock.advance(10 * 30)
    expectError(await attempt(-2), 401, 'invalid_mfa_code')
    assert.equal((await attempt(-1)).status, 200)
    assert.equal((await attempt(0)).status, 200)
    assert.equal((await attempt(1)).status, 200)
    expectError(await attempt(2), 401, 'invalid_mfa_code')
  })

  test('a code stays good for its 30-second step and the next one, then expires', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    server.clock.advance(5 * 30)
    const stepStart = Math.floor(server.clock.now().getTime() / 30_000) * 30_000
    server.clock.advance((stepStart - server.clock.now().getTime()) / 1000) // to the step's start
    const code = totpAt(server, secret)
    server.clock.advance(60) // two steps later: beyond the ±1 window
    const late = await login(t.slug, { email: u.email, password: STRONG_PASSWORD, totpCode: code })
    expectError(late, 401, 'invalid_mfa_code')
    server.clock.advance(-1) // the last second of the next step: inside the window
    const inTime = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: code,
    })
    assert.equal(inTime.status, 200, JSON.stringify(inTime.body))
  })

  test('the server computes codes exactly as an RFC 6238 authenticator does', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    server.clock.advance(3 * 30)
    const code = new TOTP({
      secret: Secret.fromBase32(secret),
      algorithm: 'SHA1',
      digits: 6,
      period: 30,
    }).generate({
      timestamp: server.clock.now().getTime(),
    })
    const ok = await login(t.slug, { email: u.email, password: STRONG_PASSWORD, totpCode: code })
    assert.equal(ok.status, 200)
  })
})

describe('an accepted time step is never accepted again', () => {
  test('the same code twice: the second sign-in is refused', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const totpCode = totpAt(server, secret)
    assert.equal(
      (await login(t.slug, { email: u.email, password: STRONG_PASSWORD, totpCode })).status,
      200,
    )
    const replay = await login(t.slug, { email: u.email, password: STRONG_PASSWORD, totpCode })
    expectError(replay, 401, 'invalid_mfa_code')
    // An earlier step inside the window is refused too, once a later one was accepted.
    const earlier = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: totpAt(server, secret, -1),
    })
    expectError(earlier, 401, 'invalid_mfa_code')
  })

  test('the code that verified the enrolment cannot sign in', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const begun = await server.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, {
      token: u.accessToken,
    })
    const code = totpAt(server, begun.body.secret)
    const verified = await server.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code },
      { token: u.accessToken },
    )
    assert.equal(verified.status, 200)
    const replay = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: code,
    })
    expectError(replay, 401, 'invalid_mfa_code')
  })

  test('one TOTP code sent in two parallel sign-ins is accepted once', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const secret = await enrolTotp(server, t.slug, u.accessToken)
    const totpCode = totpAt(server, secret)
    const before = await tenantSnapshot(server, t.tenantId)
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        login(t.slug, { email: u.email, password: STRONG_PASSWORD, totpCode }),
      ),
    )
    assert.equal(
      answers.filter((r) => r.status === 200).length,
      1,
      JSON.stringify(answers.map((a) => a.body)),
    )
    for (const r of answers.filter((a) => a.status !== 200)) expectError(r, 401, 'invalid_mfa_code')
    assert.equal(
      (await tenantSnapshot(server, t.tenantId)).sessions.length,
      before.sessions.length + 1,
    )
  })
})
