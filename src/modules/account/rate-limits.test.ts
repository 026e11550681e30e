// CONTRACT §9: reset and verification codes have their own buckets of the login-code
// sizes (3 requests per 15 minutes per address, 10 per minute per IP; 429 with
// Retry-After), and using one counts as a code verification for §6 (the token-endpoint
// budget per IP, the per-account failure cap) and §8 (sign-in failures per address).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  mailedResetCode,
  mailedVerifyCode,
  RESET,
  VERIFY_REQUEST,
} from '../../../test/fixtures/account.ts'
import { member, otherCode, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  GENEROUS_LIMITS,
  randomIp,
  startServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { DEFAULT_LIMITS } from '../../lib/limits.ts'

const NEW_PASSWORD = 'quartz-harbor-lantern-58'

let sink: SmtpSink
before(async () => {
  sink = await new SmtpSink().start()
})
after(async () => {
  await sink.stop()
})

const request = (server: TestServer, slug: string, path: string, email: string, ip = randomIp()) =>
  server.request('POST', `/v1/${slug}/${path}`, { email }, { ip })

describe('code requests', () => {
  let server: TestServer
  before(async () => {
    server = await startServer({
      smtpUrl: sink.url,
      limits: {
        ...GENEROUS_LIMITS,
        codeRequestsPerEmail: DEFAULT_LIMITS.codeRequestsPerEmail,
        codeRequestsPerIp: DEFAULT_LIMITS.codeRequestsPerIp,
      },
    })
  })
  after(() => server.close())

  for (const path of [RESET, VERIFY_REQUEST]) {
    test(`${path}: a 4th request for one address within 15 minutes is 429 from any IP, and sends nothing`, async () => {
      const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
      const u = await member(server, t.slug)
      for (let i = 0; i < 3; i++)
        assert.equal((await request(server, t.slug, path, u.email)).status, 200)
      await sink.waitFor(u.email, 3)
      const refused = await unchanged(
        server,
        t.tenantId,
        () => request(server, t.slug, path, u.email),
        {
          sink,
        },
      )
      expectError(refused, 429, 'rate_limited')
      assert.ok(Number(refused.headers.get('retry-after')) > 60, 'the address window is 15 minutes')
      // The other purposes keep their own buckets for the address.
      const others = [RESET, VERIFY_REQUEST, 'auth/request-login-code'].filter((p) => p !== path)
      for (const other of others) {
        assert.equal((await request(server, t.slug, other, u.email)).status, 200, other)
      }
      // An unknown address meets the same limit.
      const ghost = uniqueEmail('ghost')
      for (let i = 0; i < 3; i++)
        assert.equal((await request(server, t.slug, path, ghost)).status, 200)
      expectError(await request(server, t.slug, path, ghost), 429, 'rate_limited')
    })

    test(`${path}: an 11th request from one IP within a minute is 429; other IPs and purposes go on`, async () => {
      const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
      const ip = randomIp()
      for (let i = 0; i < 10; i++) {
        assert.equal((await request(server, t.slug, path, uniqueEmail(), ip)).status, 200)
      }
      const refused = await request(server, t.slug, path, uniqueEmail(), ip)
      expectError(refused, 429, 'rate_limited')
      assert.ok(Number(refused.headers.get('retry-after')) <= 60)
      assert.equal((await request(server, t.slug, path, uniqueEmail())).status, 200, 'another IP')
      const others = [RESET, VERIFY_REQUEST, 'auth/request-login-code'].filter((p) => p !== path)
      for (const other of others) {
        assert.equal((await request(server, t.slug, other, uniqueEmail(), ip)).status, 200, other)
      }
    })
  }

  test('with a token, the verification request counts against the address bucket too', async () => {
    const t = await tenantWith(server, {})
    const u = await member(server, t.slug)
    for (let i = 0; i < 3; i++) {
      const res = await server.request(
        'POST',
        `/v1/${t.slug}/${VERIFY_REQUEST}`,
        {},
        {
          token: u.accessToken,
        },
      )
      assert.equal(res.status, 200)
    }
    expectError(await request(server, t.slug, VERIFY_REQUEST, u.email), 429, 'rate_limited')
  })
})

describe('using codes: the token-endpoint budget', () => {
  let server: TestServer
  before(async () => {
    server = await startServer({
      smtpUrl: sink.url,
      limits: { ...GENEROUS_LIMITS, tokenEndpoints: { points: 3, seconds: 60 } },
    })
  })
  after(() => server.close())

  test('reset-password, verify-email and refresh share it per IP (60 a minute by default)', async () => {
    assert.deepEqual(DEFAULT_LIMITS.tokenEndpoints, { points: 60, seconds: 60 })
    const t = await tenantWith(server, {})
    const ip = randomIp()
    expectError(await reset(server, t.slug, uniqueEmail(), '123456', ip), 401, 'invalid_code')
    expectError(await verify(server, t.slug, uniqueEmail(), '123456', ip), 401, 'invalid_code')
    const refresh = await server.request(
      'POST',
      `/v1/${t.slug}/auth/refresh`,
      { refreshToken: 'x' },
      { ip },
    )
    expectError(refresh, 401, 'token_invalid')
    const refused = await reset(server, t.slug, uniqueEmail(), '123456', ip)
    expectError(refused, 429, 'rate_limited')
    assert.ok(Number(refused.headers.get('retry-after')) <= 60)
    expectError(await verify(server, t.slug, uniqueEmail(), '123456', ip), 429, 'rate_limited')
    // Another IP goes on.
    expectError(await reset(server, t.slug, uniqueEmail(), '123456'), 401, 'invalid_code')
  })
})

describe('using codes: the sign-in failure budgets', () => {
  let server: TestServer
  before(async () => {
    server = await startServer({
      smtpUrl: sink.url,
      limits: {
        ...GENEROUS_LIMITS,
        loginFailuresPerIp: { points: 3, seconds: 3600 },
        accountFailures: { points: 4, seconds: 3600 },
      },
    })
  })
  after(() => server.close())

  test('wrong reset and verification codes count as sign-in failures of the client address (§8)', async () => {
    const t = await tenantWith(server, {})
    const u = await member(server, t.slug)
    const code = await mailedResetCode(server, sink, t.slug, u.email)
    const ip = randomIp()
    // Three failures from one address, across routes and emails...
    expectError(await reset(server, t.slug, uniqueEmail(), '123456', ip), 401, 'invalid_code')
    expectError(await verify(server, t.slug, uniqueEmail(), '123456', ip), 401, 'invalid_code')
    expectError(await reset(server, t.slug, u.email, otherCode(code), ip), 401, 'invalid_code')
    // ...then even the right code is refused from it (an hour), and works from elsewhere.
    const held = await reset(server, t.slug, u.email, code, ip)
    expectError(held, 429, 'rate_limited')
    assert.ok(Number(held.headers.get('retry-after')) > 60)
    const login = await server.request(
      'POST',
      `/v1/${t.slug}/auth/login`,
      { email: u.email, password: u.password },
      { ip },
    )
    expectError(login, 429, 'rate_limited')
    assert.equal((await reset(server, t.slug, u.email, code)).status, 200)
  })

  test('wrong codes count against the account across IPs (§6): then even the right code is 429', async () => {
    const t = await tenantWith(server, {})
    const u = await member(server, t.slug)
    const code = await mailedVerifyCode(server, sink, t.slug, u.email)
    for (let i = 1; i <= 4; i++) {
      expectError(await verify(server, t.slug, u.email, otherCode(code, i)), 401, 'invalid_code')
    }
    const held = await verify(server, t.slug, u.email, code)
    expectError(held, 429, 'rate_limited')
    assert.ok(Number(held.headers.get('retry-after')) > 60, 'held for an hour')
    // The password login is held too: the cap is the account's, across factors.
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: u.password,
    })
    expectError(login, 429, 'rate_limited')
  })

  test('the signed-in verification counts against the account too', async () => {
    const t = await tenantWith(server, {})
    const u = await member(server, t.slug)
    const code = await mailedVerifyCode(server, sink, t.slug, u.email, u.accessToken)
    const signedIn = (c: string) =>
      server.request(
        'POST',
        `/v1/${t.slug}/auth/verify-email`,
        { code: c },
        {
          token: u.accessToken,
        },
      )
    for (let i = 1; i <= 4; i++)
      expectError(await signedIn(otherCode(code, i)), 401, 'invalid_code')
    expectError(await signedIn(code), 429, 'rate_limited')
  })

  test('a success ends the run of failures of the account', async () => {
    const t = await tenantWith(server, {})
    const u = await member(server, t.slug)
    for (let round = 0; round < 2; round++) {
      const code = await mailedResetCode(server, sink, t.slug, u.email)
      for (let i = 1; i <= 3; i++) {
        expectError(await reset(server, t.slug, u.email, otherCode(code, i)), 401, 'invalid_code')
      }
      assert.equal((await reset(server, t.slug, u.email, code)).status, 200, `round ${round}`)
    }
  })
})

function reset(server: TestServer, slug: string, email: string, code: string, ip = randomIp()) {
  const body = { email, code, newPassword: NEW_PASSWORD }
  return server.request('POST', `/v1/${slug}/auth/reset-password`, body, { ip })
}

function verify(server: TestServer, slug: string, email: string, code: string, ip = randomIp()) {
  return server.request('POST', `/v1/${slug}/auth/verify-email`, { email, code }, { ip })
}
