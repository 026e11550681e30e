// Public-key access tokens (CONTRACT §10): with JWT_ALG ES256 or EdDSA a back end verifies
// our tokens against GET /.well-known/jwks.json with a stock library (jose) and no shared
// secret; keys rotate through JWT_PRIVATE_KEYS; every claim check of §4 and §8 holds for
// every algorithm; and a token is only ever checked with the configured algorithm
// (RFC 8725 §3.1: no algorithm confusion between HMAC secrets and public keys).
import assert from 'node:assert/strict'
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto'
import { before, describe, test } from 'node:test'
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  createRemoteJWKSet,
  type JSONWebKeySet,
  jwtVerify,
} from 'jose'
import { expectError } from '../../../test/envelope.ts'
import { decodePart, forgeJws, privateKeyPem } from '../../../test/fixtures/signing-keys.ts'
import {
  createTenant,
  signup,
  startSecondInstance,
  startTestServer,
  TEST_JWT_SECRET,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { type AsymmetricAlgorithm, keyId } from '../../lib/jwt.ts'

const ISSUER = 'http://auth.test'
const PUBLIC_MEMBERS = ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']

interface Setup {
  server: TestServer
  pem: string
  t: TenantFixture
  user: Awaited<ReturnType<typeof signup>>
}

const setups = {} as Record<AsymmetricAlgorithm, Setup>
let hs: TestServer
let hsTenant: TenantFixture
before(async (ctx) => {
  for (const alg of ['ES256', 'EdDSA'] as const) {
    const pem = privateKeyPem(alg)
    const server = await startTestServer(ctx, { jwtAlg: alg, jwtPrivateKeys: [pem] })
    const t = await createTenant(server)
    setups[alg] = { server, pem, t, user: await signup(server, t.slug) }
  }
  hs = await startTestServer(ctx)
  hsTenant = await createTenant(hs)
})

const jwks = (server: Pick<TestServer, 'request'>) =>
  server.request<JSONWebKeySet>('GET', '/.well-known/jwks.json')

const me = (server: Pick<TestServer, 'request'>, slug: string, token: string) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })

/** The claims of a live session of the setup's user, valid for the next 15 minutes. */
function claims(s: Setup, overrides: Record<string, unknown> = {}) {
  const iat = Math.floor(s.server.clock.now().getTime() / 1000)
  return {
    ...decodePart(s.user.accessToken, 1),
    iat,
    exp: iat + 900,
    jti: randomUUID(),
    ...overrides,
  }
}

/** A token signed with the setup's own private key, with any header and claims. */
function signedByServerKey(alg: AsymmetricAlgorithm, payload: Record<string, unknown>) {
  const s = setups[alg]
  const header = decodePart(s.user.accessToken, 0)
  const key = createPrivateKey(s.pem)
  return forgeJws(header, payload, alg === 'ES256' ? { ec: key } : { ed25519: key })
}

for (const alg of ['ES256', 'EdDSA'] as const) {
  describe(`${alg} access tokens`, () => {
    test('a token from sign-in verifies against the JWKS with jose and no shared secret', async () => {
      const { server, t } = setups[alg]
      const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
        email: t.adminEmail,
        password: t.adminPassword,
      })
      assert.equal(login.status, 200)
      const set = await jwks(server)
      assert.equal(set.status, 200)
      assert.equal(set.headers.get('cache-control'), 'public, max-age=300')
      const { payload, protectedHeader } = await jwtVerify(
        login.body.accessToken,
        createLocalJWKSet(set.body),
        { issuer: ISSUER, algorithms: [alg] },
      )
      assert.equal(protectedHeader.alg, alg)
      assert.equal(protectedHeader.kid, set.body.keys[0].kid)
      assert.equal(payload.sub, login.body.user.id)
      assert.equal(payload.tid, t.tenantId)
      assert.equal(payload.role, 'Admin')
      assert.equal((payload.exp as number) - (payload.iat as number), 900)
      // The way a back end would do it: the key set fetched from the service itself.
      const remote = createRemoteJWKSet(new URL('/.well-known/jwks.json', server.url))
      await jwtVerify(login.body.accessToken, remote, { issuer: ISSUER, algorithms: [alg] })
      assert.equal((await me(server, t.slug, login.body.accessToken)).status, 200)
    })

    test('the kid is the RFC 7638 thumbprint of the public key', async () => {
      const { keys } = (await jwks(setups[alg].server)).body
      assert.equal(keys.length, 1)
      assert.equal(keys[0].kid, await calculateJwkThumbprint(keys[0], 'sha256'))
      const own = createPublicKey(setups[alg].pem).export({ format: 'jwk' })
      assert.equal(keys[0].x, own.x, 'the published key is the configured one')
    })

    test('rule: the JWKS holds public keys only, never a private component', async () => {
      const res = await jwks(setups[alg].server)
      assert.doesNotMatch(JSON.stringify(res.body), /"(d|p|q|dp|dq|qi|k)"\s*:/)
      for (const key of res.body.keys) {
        for (const member of Object.keys(key)) assert.ok(PUBLIC_MEMBERS.includes(member), member)
        assert.equal(key.alg, alg)
        assert.equal(key.use, 'sig')
        assert.equal(key.kty, alg === 'ES256' ? 'EC' : 'OKP')
        assert.equal(key.crv, alg === 'ES256' ? 'P-256' : 'Ed25519')
      }
    })

    test('a token forged with the real key and claims is accepted (the forger is sound)', async () => {
      const { server, t } = setups[alg]
      assert.equal(
        (await me(server, t.slug, signedByServerKey(alg, claims(setups[alg])))).status,
        200,
      )
    })

    test('rule: the claim checks of CONTRACT §4 and §8 hold for this algorithm', async () => {
      const s = setups[alg]
      const now = Math.floor(s.server.clock.now().getTime() / 1000)
      const refused = async (payload: Record<string, unknown>, reason = 'token_invalid') =>
        expectError(await me(s.server, s.t.slug, signedByServerKey(alg, payload)), 401, reason)
      await refused(claims(s, { iat: now, exp: now + 901 }))
      await refused(claims(s, { iat: now + 61, exp: now + 961 }))
      await refused(claims(s, { iss: 'http://evil.test' }))
      await refused(claims(s, { tid: randomUUID() }))
      await refused(claims(s, { iat: now - 1000, exp: now - 100 }), 'token_expired')
      for (const name of ['iss', 'sub', 'tid', 'role', 'sid', 'iat', 'exp', 'jti']) {
        const { [name]: _dropped, ...rest } = claims(s)
        await refused(rest)
      }
      // A flipped signature byte.
      const [h, p, sig] = s.user.accessToken.split('.')
      const bytes = Buffer.from(sig, 'base64url')
      bytes[0] ^= 1
      expectError(
        await me(s.server, s.t.slug, `${h}.${p}.${bytes.toString('base64url')}`),
        401,
        'token_invalid',
      )
    })

    test("rule: a token of another tenant is refused on this tenant's routes", async () => {
      const { server, t } = setups[alg]
      const other = await createTenant(server)
      expectError(await me(server, t.slug, other.admin.accessToken), 401, 'token_invalid')
      assert.equal((await me(server, other.slug, other.admin.accessToken)).status, 200)
    })

    test('rule: a logged-out session’s token is refused', async () => {
      const { server, t } = setups[alg]
      const u = await signup(server, t.slug)
      const out = await server.request('POST', `/v1/${t.slug}/auth/logout`, {
        refreshToken: u.refreshToken,
      })
      assert.equal(out.status, 200)
      expectError(await me(server, t.slug, u.accessToken), 401, 'session_revoked')
    })

    test('rule: an HS256 token is refused, whatever key its HMAC used (algorithm confusion)', async () => {
      const s = setups[alg]
      const { kid } = decodePart(s.user.accessToken, 0)
      const publicPem = createPublicKey(s.pem).export({ type: 'spki', format: 'pem' })
      const [jwk] = (await jwks(s.server)).body.keys
      const secrets = [publicPem, JSON.stringify(jwk), jwk.x as string, TEST_JWT_SECRET]
      for (const secret of secrets) {
        for (const headerKid of [kid, keyId(TEST_JWT_SECRET)]) {
          const token = forgeJws({ alg: 'HS256', typ: 'JWT', kid: headerKid }, claims(s), {
            hmac: secret,
          })
          expectError(await me(s.server, s.t.slug, token), 401, 'token_invalid')
        }
      }
    })

    test('rule: another asymmetric algorithm, an unlisted key or alg none is refused', async () => {
      const s = setups[alg]
      const { kid } = decodePart(s.user.accessToken, 0)
      const stranger = alg === 'ES256' ? 'EdDSA' : 'ES256'
      const strangerKey = createPrivateKey(privateKeyPem(stranger))
      const asStranger = forgeJws(
        { alg: stranger, typ: 'JWT', kid },
        claims(s),
        stranger === 'ES256' ? { ec: strangerKey } : { ed25519: strangerKey },
      )
      expectError(await me(s.server, s.t.slug, asStranger), 401, 'token_invalid')
      // The right algorithm and kid, signed by a key nobody configured.
      const unlisted = createPrivateKey(privateKeyPem(alg))
      const forged = forgeJws(
        { alg, typ: 'JWT', kid },
        claims(s),
        alg === 'ES256' ? { ec: unlisted } : { ed25519: unlisted },
      )
      expectError(await me(s.server, s.t.slug, forged), 401, 'token_invalid')
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid })).toString('base64url')}.${s.user.accessToken.split('.')[1]}.`
      expectError(await me(s.server, s.t.slug, none), 401, 'token_invalid')
    })
  })
}

describe('HS256 (the default)', () => {
  test('the JWKS is empty: the secret is never published', async () => {
    const res = await jwks(hs)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { keys: [] })
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300')
  })

  test('rule: an ES256 or EdDSA token is refused (algorithm confusion)', async () => {
    const token = hsTenant.admin.accessToken
    const payload = { ...decodePart(token, 1), jti: randomUUID() }
    const kid = keyId(TEST_JWT_SECRET)
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    const ed = generateKeyPairSync('ed25519').privateKey
    for (const forged of [
      forgeJws({ alg: 'ES256', typ: 'JWT', kid }, payload, { ec }),
      forgeJws({ alg: 'EdDSA', typ: 'JWT', kid }, payload, { ed25519: ed }),
      // The right HMAC under a header that claims a public-key algorithm.
      forgeJws({ alg: 'ES256', typ: 'JWT', kid }, payload, { hmac: TEST_JWT_SECRET }),
      forgeJws({ alg: 'EdDSA', typ: 'JWT', kid }, payload, { hmac: TEST_JWT_SECRET }),
    ]) {
      expectError(await me(hs, hsTenant.slug, forged), 401, 'token_invalid')
    }
    const sound = forgeJws({ alg: 'HS256', typ: 'JWT', kid }, payload, { hmac: TEST_JWT_SECRET })
    assert.equal((await me(hs, hsTenant.slug, sound)).status, 200, 'the forger is sound')
  })
})

describe('key rotation through JWT_PRIVATE_KEYS', () => {
  test('rule: tokens of the old key verify until it is removed; the JWKS lists both', async (t) => {
    const oldPem = privateKeyPem('ES256')
    const newPem = privateKeyPem('ES256')
    const first = await startTestServer(t, { jwtAlg: 'ES256', jwtPrivateKeys: [oldPem] })
    const tenant = await createTenant(first)
    const oldToken = tenant.admin.accessToken
    const [oldJwk] = (await jwks(first)).body.keys

    const rotated = await startSecondInstance(first, { jwtPrivateKeys: [newPem, oldPem] })
    t.after(() => rotated.close())
    const set = (await jwks(rotated)).body
    assert.equal(set.keys.length, 2)
    assert.equal(set.keys[1].kid, oldJwk.kid, 'the old key is listed after the new one')
    assert.notEqual(set.keys[0].kid, oldJwk.kid)
    assert.equal((await me(rotated, tenant.slug, oldToken)).status, 200, 'old token still accepted')
    const login = await rotated.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: tenant.adminEmail,
      password: tenant.adminPassword,
    })
    const newToken = login.body.accessToken
    assert.equal(decodePart(newToken, 0).kid, set.keys[0].kid, 'the newest key signs')
    const local = createLocalJWKSet(set)
    for (const token of [oldToken, newToken]) {
      await jwtVerify(token, local, { issuer: ISSUER, algorithms: ['ES256'] })
    }

    const retired = await startSecondInstance(first, { jwtPrivateKeys: [newPem] })
    t.after(() => retired.close())
    assert.deepEqual(
      (await jwks(retired)).body.keys.map((k) => k.kid),
      [set.keys[0].kid],
    )
    expectError(await me(retired, tenant.slug, oldToken), 401, 'token_invalid')
    assert.equal((await me(retired, tenant.slug, newToken)).status, 200)
  })
})
