// A passkey sign-in counts in the sign-in budgets like every first factor (CONTRACT §6, §8):
// the per-address budget of token endpoints, the per-address failure budget across every
// account, and the per-account run of failures across every address and factor. The try
// is reserved before the assertion is checked, so a parallel burst gets no more. The two
// registration routes take from one bucket of the token-endpoint size (`passkey-register`).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { expectError } from '../../../test/envelope.ts'
import {
  passkeySignIn,
  registerPasskey,
  SoftAuthenticator,
  signInOptions,
} from '../../../test/fixtures/passkeys.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx, {
    limits: {
      ...GENEROUS_LIMITS,
      tokenEndpoints: { points: 5, seconds: 60 },
      loginFailuresPerIp: { points: 3, seconds: 3600 },
      accountFailures: { points: 4, seconds: 3600 },
    },
  })
  t = await createTenant(server)
})

async function memberWithPasskey() {
  const user = await signup(server, t.slug)
  const { authenticator } = await registerPasskey(server, t.slug, user.accessToken)
  return { ...user, authenticator }
}

describe('per client address', () => {
  test('auth/passkey/options: over the token-endpoint budget, 429 with Retry-After', async () => {
    const ip = randomIp()
    for (let i = 0; i < 5; i++) await signInOptions(server, t.slug, undefined, ip)
    const res = await server.request('POST', `/v1/${t.slug}/auth/passkey/options`, {}, { ip })
    expectError(res, 429, 'rate_limited')
    assert.ok(Number(res.headers.get('retry-after')) > 0)
    await signInOptions(server, t.slug, undefined, randomIp()) // another address is not held
  })

  test('auth/passkey/verify: over the token-endpoint budget, 429 even for a good assertion', async () => {
    const m = await memberWithPasskey()
    const ip = randomIp()
    // The options come from elsewhere: they have a bucket of their own.
    const verifyFrom = async () => {
      const options = await signInOptions(server, t.slug, undefined, randomIp())
      const response = m.authenticator.get(options)
      return server.request('POST', `/v1/${t.slug}/auth/passkey/verify`, { response }, { ip })
    }
    for (let i = 0; i < 5; i++) {
      const res = await verifyFrom()
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
    expectError(await verifyFrom(), 429, 'rate_limited')
  })

  test('failed passkey sign-ins spend the address’s failure budget (§8), across accounts', async () => {
    const ip = randomIp()
    for (let i = 0; i < 3; i++) {
      const other = await memberWithPasskey()
      const res = await passkeySignIn(server, t.slug, other.authenticator, { ip, wrongKey: true })
      expectError(res, 401, 'invalid_credentials')
    }
    const m = await memberWithPasskey()
    expectError(await passkeySignIn(server, t.slug, m.authenticator, { ip }), 429, 'rate_limited')
    // A password from that address is held too; from another address the passkey works.
    const password = await server.request(
      'POST',
      `/v1/${t.slug}/auth/login`,
      { email: m.email, password: m.password },
      { ip },
    )
    expectError(password, 429, 'rate_limited')
    const elsewhere = await passkeySignIn(server, t.slug, m.authenticator, { ip: randomIp() })
    assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body))
  })

  test('a burst of forged assertions from one address gets no more tries than the budget', async () => {
    const ip = randomIp()
    const m = await memberWithPasskey()
    const options = await Promise.all(
      Array.from({ length: 4 }, () => signInOptions(server, t.slug, undefined, randomIp())),
    )
    const answers = await Promise.all(
      options.map((o) =>
        server.request(
          'POST',
          `/v1/${t.slug}/auth/passkey/verify`,
          { response: m.authenticator.get(o, { wrongKey: true }) },
          { ip },
        ),
      ),
    )
    const statuses = answers.map((r) => r.status).sort()
    assert.deepEqual(statuses, [401, 401, 401, 429])
  })
})

describe('registration', () => {
  test('registration-options and POST me/passkeys share one bucket of the token-endpoint size per address: then 429 with Retry-After', async () => {
    const m = await signup(server, t.slug)
    const ip = randomIp()
    const token = m.accessToken as string
    const options = (from = ip) =>
      server.request('POST', `/v1/${t.slug}/me/passkeys/registration-options`, undefined, {
        token,
        ip: from,
      })
    const register = (body: unknown, from = ip) =>
      server.request('POST', `/v1/${t.slug}/me/passkeys`, body, { token, ip: from })
    const list = async () =>
      (await server.request('GET', `/v1/${t.slug}/me/passkeys`, undefined, { token })).body.items

    // Five points of the budget of 5: options, register, options, register, options.
    for (let i = 0; i < 2; i++) {
      const begun = await options()
      assert.equal(begun.status, 200, JSON.stringify(begun.body))
      const done = await register({ response: new SoftAuthenticator().create(begun.body) })
      assert.equal(done.status, 200, JSON.stringify(done.body))
    }
    const last = await options()
    assert.equal(last.status, 200, JSON.stringify(last.body))
    // Had each route a bucket of its own, this third registration would still pass.
    const held = await register({ response: new SoftAuthenticator().create(last.body) })
    expectError(held, 429, 'rate_limited')
    assert.ok(Number(held.headers.get('retry-after')) > 0)
    assert.equal((await list()).length, 2, 'nothing stored')
    expectError(await options(), 429, 'rate_limited')

    // The sign-in options have a bucket of their own; another address is not held.
    await signInOptions(server, t.slug, undefined, ip)
    const elsewhere = randomIp()
    const begun = await options(elsewhere)
    assert.equal(begun.status, 200, JSON.stringify(begun.body))
    const done = await register({ response: new SoftAuthenticator().create(begun.body) }, elsewhere)
    assert.equal(done.status, 200, JSON.stringify(done.body))
  })
})

describe('per account, across addresses and factors', () => {
  test('failed passkey sign-ins hold the account: then 429 for the passkey and the password', async () => {
    const m = await memberWithPasskey()
    for (let i = 0; i < 4; i++) {
      const res = await passkeySignIn(server, t.slug, m.authenticator, {
        ip: randomIp(),
        wrongKey: true,
      })
      expectError(res, 401, 'invalid_credentials')
    }
    const good = await passkeySignIn(server, t.slug, m.authenticator, { ip: randomIp() })
    expectError(good, 429, 'rate_limited')
    const password = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: m.email,
      password: m.password,
    })
    expectError(password, 429, 'rate_limited')
  })

  test('a passkey sign-in ends the run of failures (the count starts again)', async () => {
    const m = await memberWithPasskey()
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 3; i++) {
        const res = await passkeySignIn(server, t.slug, m.authenticator, {
          ip: randomIp(),
          wrongKey: true,
        })
        expectError(res, 401, 'invalid_credentials')
      }
      const ok = await passkeySignIn(server, t.slug, m.authenticator, { ip: randomIp() })
      assert.equal(ok.status, 200, JSON.stringify(ok.body))
    }
  })

  test('unknown credentials never count against a user', async () => {
    const m = await memberWithPasskey()
    for (let i = 0; i < 5; i++) {
      const stranger = new SoftAuthenticator()
      const res = await passkeySignIn(server, t.slug, stranger, { ip: randomIp() })
      assert.ok([401, 429].includes(res.status))
    }
    const ok = await passkeySignIn(server, t.slug, m.authenticator, { ip: randomIp() })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })
})
