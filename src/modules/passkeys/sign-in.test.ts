// Passkey sign-in over HTTP with a software authenticator (real ES256 signatures):
// options with and without an email, the assertion checks (challenge, origin, RP ID, user
// verification, signature, counter), the user's status, the MFA policy, and the audit rows.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditMark, auditSince, oneEvent, setTenant } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  FLAG,
  passkeySignIn,
  registerPasskey,
  SoftAuthenticator,
  signInOptions,
} from '../../../test/fixtures/passkeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { eq } from '../../db/orm.ts'
import { passkeys, webauthnChallenges } from '../../db/schema.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

/** A member with one registered passkey. */
async function memberWithPasskey(slug = t.slug) {
  const user = await signup(server, slug)
  const { authenticator, passkey } = await registerPasskey(server, slug, user.accessToken)
  return { ...user, id: user.user.id as string, authenticator, passkey }
}

const verify = (response: unknown, slug = t.slug, ip?: string) =>
  server.request('POST', `/v1/${slug}/auth/passkey/verify`, { response }, { ip })

async function passkeyRow(id: string) {
  const [row] = await server.deps.db.select().from(passkeys).where(eq(passkeys.id, id))
  return row
}

describe('a registered passkey signs in', () => {
  test('with its email: a token envelope whose tokens work, UserLogin method passkey', async () => {
    const m = await memberWithPasskey()
    const mark = await auditMark(server, t.tenantId)
    const res = await passkeySignIn(server, t.slug, m.authenticator, { email: m.email })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, m.id)
    assert.equal(res.body.accessTokenExpiresIn, 900)
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(me.status, 200)
    assert.equal(me.body.id, m.id)
    const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: res.body.refreshToken,
    })
    assert.equal(refreshed.status, 200)

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionCreated', 'UserLogin'],
    )
    const login = events[1]
    assert.equal(login.userId, m.id)
    assert.equal(login.actorId, m.id)
    assert.equal(login.metadata.method, 'passkey')
    assert.equal(login.metadata.via, 'passkey')
    assert.equal(login.metadata.passkeyId, m.passkey.id)

    const row = await passkeyRow(m.passkey.id)
    assert.equal(row.signCount, 1)
    assert.ok(row.lastUsedAt)
    const list = await server.request('GET', `/v1/${t.slug}/me/passkeys`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(list.body.items[0].lastUsedAt, row.lastUsedAt?.toISOString())
  })

  test('without an email: a discoverable credential, empty allowCredentials', async () => {
    const m = await memberWithPasskey()
    const options = await signInOptions(server, t.slug)
    assert.deepEqual(options.allowCredentials, [])
    assert.equal(options.rpId, 'auth.test')
    const res = await verify(m.authenticator.get(options))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, m.id)
  })

  test('the options list the address’s passkeys, with user verification required', async () => {
    const m = await memberWithPasskey()
    const second = await registerPasskey(server, t.slug, m.accessToken)
    const res = await server.request('POST', `/v1/${t.slug}/auth/passkey/options`, {
      email: m.email.toUpperCase(),
    })
    assert.equal(res.status, 200)
    assert.deepEqual(Object.keys(res.body).sort(), [
      'allowCredentials',
      'challenge',
      'rpId',
      'timeout',
      'userVerification',
    ])
    assert.equal(res.body.userVerification, 'required')
    assert.equal(res.body.timeout, 300_000)
    // Its two passkeys first, then one decoy (CONTRACT §16: three ids for every address).
    assert.equal(res.body.allowCredentials.length, 3)
    assert.deepEqual(
      res.body.allowCredentials
        .slice(0, 2)
        .map((c: { id: string }) => c.id)
        .sort(),
      [m.authenticator.id, second.authenticator.id].sort(),
    )
    assert.deepEqual(res.body.allowCredentials[0].transports, ['internal'])
    assert.equal(res.body.allowCredentials[0].type, 'public-key')
  })

  test('an authenticator that keeps no counter (always 0) signs in again and again', async () => {
    const user = await signup(server, t.slug)
    const { authenticator } = await registerPasskey(server, t.slug, user.accessToken)
    for (let i = 0; i < 2; i++) {
      const res = await passkeySignIn(server, t.slug, authenticator, { counter: 0 })
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
  })
})

// The answers' shapes, counts and stability: options-enumeration.test.ts.
describe('no enumeration through the options', () => {
  test('a challenge asked for an unknown address signs nobody in', async () => {
    const m = await memberWithPasskey()
    const options = await signInOptions(server, t.slug, uniqueEmail('nobody'))
    expectError(await verify(m.authenticator.get(options)), 401, 'invalid_credentials')
  })

  test('a challenge asked for one address does not sign in another user’s passkey', async () => {
    const a = await memberWithPasskey()
    const b = await memberWithPasskey()
    const options = await signInOptions(server, t.slug, a.email)
    expectError(await verify(b.authenticator.get(options)), 401, 'invalid_credentials')
    const failed = await oneEvent(server, t.tenantId, 'UserLoginFailed', (r) => r.userId === b.id)
    assert.equal(failed.metadata.reason, 'invalid_challenge')
  })
})

describe('the assertion is checked', () => {
  const refusals: [string, (a: SoftAuthenticator) => object][] = [
    ['a wrong origin', () => ({ origin: 'http://evil.test' })],
    ['a wrong RP ID', () => ({ rpId: 'evil.test' })],
    ['user verification missing (UP only)', () => ({ flags: FLAG.UP })],
    ['user presence missing (UV only)', () => ({ flags: FLAG.UV })],
    ['a signature by another key', () => ({ wrongKey: true })],
    ['the registration type (webauthn.create)', () => ({ type: 'webauthn.create' })],
    ['another user handle', () => ({ userHandle: Buffer.alloc(16, 1).toString('base64url') })],
  ]
  for (const [name, override] of refusals) {
    test(`${name}: 401 invalid_credentials, audited, no session`, async () => {
      const m = await memberWithPasskey()
      const mark = await auditMark(server, t.tenantId)
      const res = await passkeySignIn(server, t.slug, m.authenticator, override(m.authenticator))
      expectError(res, 401, 'invalid_credentials')
      const events = await auditSince(server, t.tenantId, mark)
      assert.deepEqual(
        events.map((e) => e.action),
        ['UserLoginFailed'],
      )
      assert.equal(events[0].userId, m.id)
      assert.equal(events[0].metadata.via, 'passkey')
      assert.equal((await passkeyRow(m.passkey.id)).lastUsedAt, null)
    })
  }

  test('an unknown credential: 401 invalid_credentials, audited without a user', async () => {
    const stranger = new SoftAuthenticator()
    stranger.userHandle = Buffer.alloc(16, 2).toString('base64url')
    const mark = await auditMark(server, t.tenantId)
    expectError(await passkeySignIn(server, t.slug, stranger), 401, 'invalid_credentials')
    const events = await auditSince(server, t.tenantId, mark)
    assert.equal(events.length, 1)
    assert.equal(events[0].action, 'UserLoginFailed')
    assert.equal(events[0].userId, null)
    assert.equal(events[0].metadata.reason, 'unknown_credential')
  })
})

describe('challenges: single use, 5 minutes, this tenant, this ceremony', () => {
  test('a challenge used once is refused the second time', async () => {
    const m = await memberWithPasskey()
    const options = await signInOptions(server, t.slug)
    assert.equal((await verify(m.authenticator.get(options))).status, 200)
    expectError(await verify(m.authenticator.get(options)), 401, 'invalid_credentials')
    const failed = await oneEvent(server, t.tenantId, 'UserLoginFailed', (r) => r.userId === m.id)
    assert.equal(failed.metadata.reason, 'invalid_challenge')
  })

  test('a challenge past 5 minutes is refused; one just before is not', async () => {
    const m = await memberWithPasskey()
    const late = await signInOptions(server, t.slug)
    const inTime = await signInOptions(server, t.slug)
    server.clock.advance(299)
    assert.equal((await verify(m.authenticator.get(inTime))).status, 200)
    server.clock.advance(2)
    expectError(await verify(m.authenticator.get(late)), 401, 'invalid_credentials')
  })

  test('another tenant’s challenge is refused (and stays unspent there)', async () => {
    const m = await memberWithPasskey()
    const other = await createTenant(server)
    const options = await signInOptions(server, other.slug)
    expectError(await verify(m.authenticator.get(options)), 401, 'invalid_credentials')
    const [row] = await server.deps.db
      .select()
      .from(webauthnChallenges)
      .where(eq(webauthnChallenges.tenantId, other.tenantId))
    assert.equal(row.usedAt, null)
  })

  test('a registration challenge does not sign in', async () => {
    const m = await memberWithPasskey()
    const reg = await server.request(
      'POST',
      `/v1/${t.slug}/me/passkeys/registration-options`,
      undefined,
      { token: m.accessToken },
    )
    expectError(await verify(m.authenticator.get(reg.body)), 401, 'invalid_credentials')
  })

  test('a challenge nobody issued is refused', async () => {
    const m = await memberWithPasskey()
    const forged = { challenge: Buffer.alloc(32, 9).toString('base64url') }
    expectError(await verify(m.authenticator.get(forged)), 401, 'invalid_credentials')
  })
})

describe('the signature counter', () => {
  test('a counter that goes backwards is refused and audited (passkey_counter)', async () => {
    const m = await memberWithPasskey()
    assert.equal((await passkeySignIn(server, t.slug, m.authenticator, { counter: 5 })).status, 200)
    for (const counter of [5, 4, 0]) {
      const mark = await auditMark(server, t.tenantId)
      const res = await passkeySignIn(server, t.slug, m.authenticator, { counter })
      expectError(res, 401, 'invalid_credentials')
      const events = await auditSince(server, t.tenantId, mark)
      assert.deepEqual(
        events.map((e) => [e.action, e.metadata.reason, e.metadata.method]),
        [['UserLoginFailed', 'passkey_counter', 'passkey']],
      )
    }
    assert.equal((await passkeyRow(m.passkey.id)).signCount, 5)
    assert.equal((await passkeySignIn(server, t.slug, m.authenticator, { counter: 6 })).status, 200)
    assert.equal((await passkeyRow(m.passkey.id)).signCount, 6)
  })

  test('two assertions racing with one counter value: one session at most', async () => {
    const m = await memberWithPasskey()
    const [o1, o2] = [await signInOptions(server, t.slug), await signInOptions(server, t.slug)]
    const results = await Promise.all([
      verify(m.authenticator.get(o1, { counter: 7 })),
      verify(m.authenticator.get(o2, { counter: 7 })),
    ])
    const statuses = results.map((r) => r.status).sort()
    assert.deepEqual(statuses, [200, 401])
    const failed = await oneEvent(server, t.tenantId, 'UserLoginFailed', (r) => r.userId === m.id)
    assert.equal(failed.metadata.reason, 'passkey_counter')
  })
})

describe('the user behind the passkey', () => {
  test('a Suspended user: 401 account_suspended, audited', async () => {
    const m = await memberWithPasskey()
    const res = await server.request(
      'PATCH',
      `/v1/${t.slug}/users/${m.id}`,
      { status: 'Suspended' },
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200)
    expectError(await passkeySignIn(server, t.slug, m.authenticator), 401, 'account_suspended')
    const failed = await oneEvent(server, t.tenantId, 'UserLoginFailed', (r) => r.userId === m.id)
    assert.equal(failed.metadata.reason, 'account_suspended')
  })

  test('a Suspended user with a forged assertion: invalid_credentials, not account_suspended', async () => {
    const m = await memberWithPasskey()
    await server.request(
      'PATCH',
      `/v1/${t.slug}/users/${m.id}`,
      { status: 'Suspended' },
      {
        token: t.admin.accessToken,
      },
    )
    const res = await passkeySignIn(server, t.slug, m.authenticator, { wrongKey: true })
    expectError(res, 401, 'invalid_credentials')
  })

  test('a deleted user: 401 invalid_credentials', async () => {
    const m = await memberWithPasskey()
    const res = await server.request('DELETE', `/v1/${t.slug}/me`, undefined, {
      token: m.accessToken,
    })
    assert.equal(res.status, 200)
    expectError(await passkeySignIn(server, t.slug, m.authenticator), 401, 'invalid_credentials')
  })

  test('mfaPolicy Required: a passkey sign-in asks no second factor', async () => {
    const tenant = await createTenant(server)
    const user = await signup(server, tenant.slug)
    const { authenticator } = await registerPasskey(server, tenant.slug, user.accessToken)
    await setTenant(server, tenant.slug, { mfaPolicy: 'Required' })
    const password = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: user.email,
      password: user.password,
    })
    assert.equal(password.status, 401) // the password alone is not enough any more
    const res = await passkeySignIn(server, tenant.slug, authenticator, { email: user.email })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, user.user.id)
  })
})
