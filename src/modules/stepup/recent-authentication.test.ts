// CONTRACT §16, recent authentication: adding or changing a way to sign in (passkey
// registration, beginning TOTP enrolment, removing a passkey, deleting the account) needs a
// session that proved a sign-in factor in the last 10 minutes; a refresh does not renew it;
// POST me/reauthenticate proves one again (password, TOTP, recovery code, login code or
// passkey) for that session only, and each wrong proof is a failed sign-in in the budgets.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditMark, auditSince, setTenant, tenantSnapshot, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import { enrolTotp, enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import { registerPasskey, SoftAuthenticator } from '../../../test/fixtures/passkeys.ts'
import { mailedLoginCode, otherCode, tenantWith } from '../../../test/fixtures/passwordless.ts'
import { sidOf } from '../../../test/fixtures/sessions.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

/** Just past the window: 10 minutes and a second (an access token lives 15). */
const STALE = 10 * 60 + 1

let sink: SmtpSink
let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  t = await createTenant(server)
  await setTenant(server, t.slug, { mfaPolicy: 'Optional' })
})
after(async () => {
  await sink.stop()
})

async function member(slug = t.slug) {
  const user = await signup(server, slug)
  return { ...user, id: user.user.id as string, token: user.accessToken as string }
}

const post = (path: string, token: string, body?: unknown, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/${path}`, body, { token })
const reauthenticate = (token: string, body: unknown, slug = t.slug) =>
  post('me/reauthenticate', token, body, slug)
const reauthOptions = (token: string, slug = t.slug) =>
  post('me/reauthenticate/options', token, undefined, slug)
const registrationOptions = (token: string, slug = t.slug) =>
  post('me/passkeys/registration-options', token, undefined, slug)
const enrol = (token: string, slug = t.slug) => post('mfa/totp/enroll', token, undefined, slug)

async function login(email: string, password: string) {
  const res = await server.request('POST', `/v1/${t.slug}/auth/login`, { email, password })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.accessToken as string
}

async function refresh(refreshToken: string) {
  const res = await post('auth/refresh', '', { refreshToken })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { accessToken: string; refreshToken: string }
}

/** The session's row, to show a refused proof stamped nothing. */
async function sessionsOf(tenantId = t.tenantId) {
  return (await tenantSnapshot(server, tenantId, { audit: false })).sessions
}

describe('the gated routes', () => {
  test('10 minutes after sign-in each route that adds or removes a way to sign in answers 401 reauthentication_required and changes nothing', async () => {
    const u = await member()
    const { passkey } = await registerPasskey(server, t.slug, u.token)
    const begun = await registrationOptions(u.token)
    assert.equal(begun.status, 200)
    const response = new SoftAuthenticator().create(begun.body)
    server.clock.advance(STALE)
    const attempts: [string, () => Promise<Awaited<ReturnType<typeof post>>>][] = [
      ['passkey registration options', () => registrationOptions(u.token)],
      ['passkey registration', () => post('me/passkeys', u.token, { response })],
      [
        'passkey removal',
        () =>
          server.request('DELETE', `/v1/${t.slug}/me/passkeys/${passkey.id}`, undefined, {
            token: u.token,
          }),
      ],
      ['TOTP enrolment', () => enrol(u.token)],
      [
        'account deletion',
        () => server.request('DELETE', `/v1/${t.slug}/me`, undefined, { token: u.token }),
      ],
    ]
    for (const [what, attempt] of attempts) {
      const res = await unchanged(server, t.tenantId, attempt)
      assert.equal(res.status, 401, what)
      expectError(res, 401, 'reauthentication_required')
    }
  })

  test('within 10 minutes of signing in every gated route works (SPEC: enrol right after login)', async () => {
    const u = await member()
    const token = await login(u.email, u.password)
    server.clock.advance(10 * 60 - 5)
    const { passkey } = await registerPasskey(server, t.slug, token)
    assert.equal((await enrol(token)).status, 200)
    const removed = await server.request(
      'DELETE',
      `/v1/${t.slug}/me/passkeys/${passkey.id}`,
      undefined,
      { token },
    )
    assert.equal(removed.status, 200, JSON.stringify(removed.body))
    const deleted = await server.request('DELETE', `/v1/${t.slug}/me`, undefined, { token })
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body))
  })

  test('a refresh keeps the session and does not renew the window', async () => {
    const u = await member()
    server.clock.advance(STALE)
    const renewed = await refresh(u.refreshToken)
    assert.equal(sidOf(renewed.accessToken), sidOf(u.token))
    expectError(await enrol(renewed.accessToken), 401, 'reauthentication_required')
    // Long after (the first access token has expired), refreshing again does not either.
    server.clock.advance(20 * 60)
    const later = await refresh(renewed.refreshToken)
    expectError(await registrationOptions(later.accessToken), 401, 'reauthentication_required')
  })
})

describe('POST me/reauthenticate', () => {
  test('a password proves it for 10 minutes: the gated route works, then refuses again', async () => {
    const u = await member()
    server.clock.advance(STALE)
    expectError(await enrol(u.token), 401, 'reauthentication_required')
    const mark = await auditMark(server, t.tenantId)
    const res = await reauthenticate(u.token, { password: u.password })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true })
    assert.deepEqual(await auditSince(server, t.tenantId, mark), [])
    assert.equal((await enrol(u.token)).status, 200)
    server.clock.advance(STALE)
    const { accessToken } = await refresh(u.refreshToken)
    expectError(await enrol(accessToken), 401, 'reauthentication_required')
  })

  test('a TOTP code proves it, and its time step is never accepted again', async () => {
    const u = await member()
    const secret = await enrolTotp(server, t.slug, u.token)
    server.clock.advance(STALE)
    expectError(await registrationOptions(u.token), 401, 'reauthentication_required')
    const code = totpAt(server, secret)
    const mark = await auditMark(server, t.tenantId)
    assert.equal((await reauthenticate(u.token, { totpCode: code })).status, 200)
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.metadata]),
      [['MfaTotpVerified', { flow: 'reauthenticate' }]],
    )
    assert.equal((await registrationOptions(u.token)).status, 200)
    const before = await sessionsOf()
    expectError(await reauthenticate(u.token, { totpCode: code }), 401, 'invalid_mfa_code')
    assert.deepEqual(await sessionsOf(), before)
  })

  test('a recovery code proves it and is spent (audited, one use)', async () => {
    const u = await member()
    const { recoveryCodes } = await enrolWithRecoveryCodes(server, t.slug, u.token)
    server.clock.advance(STALE)
    expectError(await registrationOptions(u.token), 401, 'reauthentication_required')
    const mark = await auditMark(server, t.tenantId)
    const res = await reauthenticate(u.token, { recoveryCode: recoveryCodes[0].toUpperCase() })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.metadata]),
      [['MfaRecoveryCodeUsed', { remaining: 9 }]],
    )
    assert.equal((await registrationOptions(u.token)).status, 200)
    expectError(
      await reauthenticate(u.token, { recoveryCode: recoveryCodes[0] }),
      401,
      'invalid_mfa_code',
    )
  })

  test('a login code proves it for a user without a password', async () => {
    const pl = await tenantWith(server, {
      authPolicy: 'PasswordlessOnly',
      passwordlessJitSignup: true,
    })
    const email = uniqueEmail('nopassword')
    const first = await mailedLoginCode(server, sink, pl.slug, email)
    const signedIn = await post('auth/verify-login-code', '', { email, code: first }, pl.slug)
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body))
    const token = signedIn.body.accessToken as string
    server.clock.advance(STALE)
    expectError(await registrationOptions(token, pl.slug), 401, 'reauthentication_required')

    const code = await mailedLoginCode(server, sink, pl.slug, email)
    const wrong = await reauthenticate(token, { code: otherCode(code) }, pl.slug)
    expectError(wrong, 401, 'invalid_code')
    expectError(await registrationOptions(token, pl.slug), 401, 'reauthentication_required')
    const res = await reauthenticate(token, { code }, pl.slug)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal((await registrationOptions(token, pl.slug)).status, 200)
    // The code was spent.
    expectError(await reauthenticate(token, { code }, pl.slug), 401, 'invalid_code')
  })

  test('a passkey proves it, with options bound to this user and this ceremony', async () => {
    const u = await member()
    const { authenticator } = await registerPasskey(server, t.slug, u.token)
    server.clock.advance(STALE)
    expectError(await registrationOptions(u.token), 401, 'reauthentication_required')
    const options = await reauthOptions(u.token)
    assert.equal(options.status, 200, JSON.stringify(options.body))
    assert.deepEqual(
      options.body.allowCredentials.map((c: { id: string }) => c.id),
      [authenticator.id],
    )
    assert.equal(options.body.userVerification, 'required')
    const res = await reauthenticate(u.token, { response: authenticator.get(options.body) })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal((await registrationOptions(u.token)).status, 200)
  })

  test('the proof is for that session only: a second session of the user is still refused', async () => {
    const u = await member()
    const other = await login(u.email, u.password)
    server.clock.advance(STALE)
    assert.equal((await reauthenticate(u.token, { password: u.password })).status, 200)
    assert.equal((await registrationOptions(u.token)).status, 200)
    expectError(await registrationOptions(other), 401, 'reauthentication_required')
  })
})

describe('wrong proofs', () => {
  /** Refused with `reason`, audited as UserLoginFailed, no session stamped, still refused. */
  async function refused(
    token: string,
    body: unknown,
    reason: string,
    expected: Record<string, unknown>,
  ) {
    const before = await sessionsOf()
    const mark = await auditMark(server, t.tenantId)
    expectError(await reauthenticate(token, body), 401, reason)
    assert.deepEqual(await sessionsOf(), before, 'no session was stamped')
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['UserLoginFailed'],
    )
    for (const [key, value] of Object.entries(expected)) {
      assert.deepEqual((events[0].metadata as Record<string, unknown>)[key], value, key)
    }
    expectError(await registrationOptions(token), 401, 'reauthentication_required')
  }

  test('a wrong password, TOTP code or recovery code is refused with its reason and changes nothing else', async () => {
    const u = await member()
    const { secret, recoveryCodes } = await enrolWithRecoveryCodes(server, t.slug, u.token)
    server.clock.advance(STALE)
    const snapshot = await tenantSnapshot(server, t.tenantId, { audit: false })
    await refused(u.token, { password: 'not-the-password' }, 'invalid_credentials', {
      reason: 'invalid_credentials',
      route: 'reauthenticate',
    })
    const wrongTotp = otherCode(totpAt(server, secret), 7)
    await refused(u.token, { totpCode: wrongTotp }, 'invalid_mfa_code', {
      reason: 'invalid_mfa_code',
      method: 'totp',
    })
    await refused(u.token, { recoveryCode: 'aaaaa-aaaaa' }, 'invalid_mfa_code', {
      reason: 'invalid_mfa_code',
      method: 'recovery_code',
    })
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), snapshot)
    // The right ones still work afterwards: nothing was burned by the wrong ones.
    assert.equal((await reauthenticate(u.token, { recoveryCode: recoveryCodes[1] })).status, 200)
  })

  test('a passkey assertion is refused unless it is this user’s, for a reauthentication challenge', async () => {
    const u = await member()
    const { authenticator } = await registerPasskey(server, t.slug, u.token)
    const stranger = await member()
    const { authenticator: theirs } = await registerPasskey(server, t.slug, stranger.token)
    server.clock.advance(STALE)
    const why = (reason: string) => ({ reason, method: 'passkey', email: u.email })

    // A forged signature over this user's own options.
    const forged = authenticator.get((await reauthOptions(u.token)).body, { wrongKey: true })
    await refused(u.token, { response: forged }, 'invalid_credentials', why('invalid_assertion'))
    // Another user's passkey answering this user's challenge.
    const foreign = theirs.get((await reauthOptions(u.token)).body)
    await refused(u.token, { response: foreign }, 'invalid_credentials', why('unknown_credential'))
    // A sign-in challenge (another ceremony).
    const signIn = await post('auth/passkey/options', '', { email: u.email })
    const crossed = authenticator.get(signIn.body)
    await refused(u.token, { response: crossed }, 'invalid_credentials', why('invalid_challenge'))
    // And the other way: a reauthentication challenge does not sign anyone in.
    const reused = authenticator.get((await reauthOptions(u.token)).body)
    const verify = await post('auth/passkey/verify', '', { response: reused })
    expectError(verify, 401, 'invalid_credentials')
  })

  test('an empty body or two proofs at once: 400 validation, nothing changed', async () => {
    const u = await member()
    server.clock.advance(STALE)
    for (const body of [{}, { password: u.password, totpCode: '123456' }, { totpCode: 'abc' }]) {
      const res = await unchanged(server, t.tenantId, () => reauthenticate(u.token, body))
      expectError(res, 400, 'validation')
    }
  })

  test('passkey options: 400 for a user without passkeys, 403 when the tenant turned them off', async () => {
    const u = await member()
    expectError(
      await unchanged(server, t.tenantId, () => reauthOptions(u.token)),
      400,
      'validation',
    )
    const off = await createTenant(server)
    await setTenant(server, off.slug, { passkeysEnabled: false })
    const v = await member(off.slug)
    expectError(await reauthOptions(v.token, off.slug), 403, 'passkeys_disabled')
  })
})

describe('who may reauthenticate', () => {
  test('an API key: 401 user_token_required on both routes', async () => {
    const admin = await login(t.adminEmail, t.adminPassword)
    const { plaintext } = await createKey(server, t.slug, admin)
    const res = await unchanged(server, t.tenantId, () =>
      reauthenticate(plaintext, { password: t.adminPassword }),
    )
    expectError(res, 401, 'user_token_required')
    expectError(await reauthOptions(plaintext), 401, 'user_token_required')
  })

  test('a session that ended: 401 session_revoked, as on other me routes', async () => {
    const u = await member()
    const out = await post('auth/logout', u.token, { refreshToken: u.refreshToken })
    assert.equal(out.status, 200, JSON.stringify(out.body))
    const res = await unchanged(server, t.tenantId, () =>
      reauthenticate(u.token, { password: u.password }),
    )
    expectError(res, 401, 'session_revoked')
  })
})

test('wrong proofs count as failed sign-ins: the per-account cap and the per-address budget reach 429', async (ctx) => {
  const limited = await startTestServer(ctx, {
    limits: {
      ...GENEROUS_LIMITS,
      accountFailures: { points: 3, seconds: 3600 },
      loginFailuresPerIp: { points: 5, seconds: 3600 },
    },
  })
  const lt = await createTenant(limited)
  const send = (token: string, body: unknown, ip = randomIp()) =>
    limited.request('POST', `/v1/${lt.slug}/me/reauthenticate`, body, { token, ip })
  const signIn = (email: string, password: string, ip = randomIp()) =>
    limited.request('POST', `/v1/${lt.slug}/auth/login`, { email, password }, { ip })

  // Per account (CONTRACT §6): three wrong proofs from three addresses, then even the right
  // password is held, here and at sign-in.
  const a = await signup(limited, lt.slug)
  for (let i = 0; i < 3; i++) {
    expectError(
      await send(a.accessToken, { password: 'wrong-password' }),
      401,
      'invalid_credentials',
    )
  }
  expectError(await send(a.accessToken, { password: a.password }), 429, 'rate_limited')
  expectError(await signIn(a.email, a.password), 429, 'rate_limited')

  // Per client address (CONTRACT §8): five failures of two accounts from one address, then
  // that address's sign-ins are refused, whoever they are for.
  const ip = randomIp()
  const b = await signup(limited, lt.slug)
  const c = await signup(limited, lt.slug)
  for (const [who, n] of [
    [b, 2],
    [c, 3],
  ] as const) {
    for (let i = 0; i < n; i++) {
      expectError(await send(who.accessToken, { totpCode: '000000' }, ip), 401, 'invalid_mfa_code')
    }
  }
  const d = await signup(limited, lt.slug)
  expectError(await signIn(d.email, d.password, ip), 429, 'rate_limited')
  assert.equal((await signIn(d.email, d.password)).status, 200)
})
