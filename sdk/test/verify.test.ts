// verifyAccessToken (CONTRACT §4, §10): ES256 against the service's JWKS, HS256 with the
// shared secret; iss, exp and tid checked; no HMAC token accepted through a JWKS; and the
// optional introspection refuses a logged-out session at once.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { privateKeyPem } from '../../test/fixtures/signing-keys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  TEST_JWT_SECRET,
  type TenantFixture,
  type TestServer,
} from '../../test/helpers.ts'
import { AuthServiceError, createClient, verifyAccessToken } from '../src/index.ts'

const ISSUER = 'http://auth.test'

let es: TestServer
let esTenant: TenantFixture
let hs: TestServer
let hsTenant: TenantFixture
before(async (ctx) => {
  es = await startTestServer(ctx, { jwtAlg: 'ES256', jwtPrivateKeys: [privateKeyPem('ES256')] })
  esTenant = await createTenant(es)
  hs = await startTestServer(ctx)
  hsTenant = await createTenant(hs)
})

const refusedWith = (reason: string) => (e: unknown) =>
  e instanceof AuthServiceError && e.status === 401 && e.reason === reason

describe('ES256 through the JWKS', () => {
  const options = () => ({
    issuer: ISSUER,
    tenantId: esTenant.tenantId,
    jwksUrl: `${es.url}/.well-known/jwks.json`,
  })

  test('a valid token gives its claims', async () => {
    const user = await signup(es, esTenant.slug)
    const claims = await verifyAccessToken(user.accessToken, options())
    assert.equal(claims.sub, user.user.id)
    assert.equal(claims.tid, esTenant.tenantId)
    assert.equal(claims.iss, ISSUER)
    assert.equal(claims.role, 'Member')
    assert.equal(typeof claims.sid, 'string')
  })

  test("audience: the service's own tokens carry {PUBLIC_URL}/v1; another audience is token_invalid", async () => {
    const user = await signup(es, esTenant.slug)
    const claims = await verifyAccessToken(user.accessToken, {
      ...options(),
      audience: `${ISSUER}/v1`,
    })
    assert.equal(claims.sub, user.user.id)
    await assert.rejects(
      verifyAccessToken(user.accessToken, { ...options(), audience: 'https://api.example.com' }),
      refusedWith('token_invalid'),
    )
  })

  test('rule: an expired token is refused with token_expired', async () => {
    const user = await signup(es, esTenant.slug)
    const later = new Date(Date.now() + 16 * 60 * 1000)
    await assert.rejects(
      verifyAccessToken(user.accessToken, { ...options(), currentDate: later }),
      refusedWith('token_expired'),
    )
  })

  test("rule: another tenant's token, another issuer, a tampered token are token_invalid", async () => {
    const user = await signup(es, esTenant.slug)
    const other = await createTenant(es)
    await assert.rejects(
      verifyAccessToken(user.accessToken, { ...options(), tenantId: other.tenantId }),
      refusedWith('token_invalid'),
    )
    await assert.rejects(
      verifyAccessToken(user.accessToken, { ...options(), issuer: 'http://evil.test' }),
      refusedWith('token_invalid'),
    )
    const [h, p, s] = user.accessToken.split('.')
    const tampered = `${h}.${p}.${s.slice(0, -4)}AAAA`
    await assert.rejects(verifyAccessToken(tampered, options()), refusedWith('token_invalid'))
  })

  test('rule: an HS256 token is never accepted through a JWKS (no algorithm confusion)', async () => {
    const user = await signup(hs, hsTenant.slug)
    await assert.rejects(
      verifyAccessToken(user.accessToken, { ...options(), tenantId: hsTenant.tenantId }),
      refusedWith('token_invalid'),
    )
  })
})

describe('HS256 with the shared secret', () => {
  const options = () => ({ issuer: ISSUER, tenantId: hsTenant.tenantId, secret: TEST_JWT_SECRET })

  test('a valid token gives its claims; a wrong secret is token_invalid', async () => {
    const user = await signup(hs, hsTenant.slug)
    assert.equal((await verifyAccessToken(user.accessToken, options())).sub, user.user.id)
    await assert.rejects(
      verifyAccessToken(user.accessToken, {
        ...options(),
        secret: 'another-secret-another-secret-00',
      }),
      refusedWith('token_invalid'),
    )
  })

  test('rule: with introspect, a logged-out session is refused at once (session_revoked)', async () => {
    const client = createClient({ baseUrl: hs.url, tenant: hsTenant.slug })
    const { plaintext } = await client.createApiKey({
      body: { name: 'verifier', environment: 'live' },
      token: hsTenant.admin.accessToken,
    })
    const introspect = { url: `${hs.url}/v1/${hsTenant.slug}/oauth/introspect`, apiKey: plaintext }
    const user = await signup(hs, hsTenant.slug)
    assert.equal(
      (await verifyAccessToken(user.accessToken, { ...options(), introspect })).sub,
      user.user.id,
    )
    await client.logout({ body: { refreshToken: user.refreshToken } })
    // Offline, the token still verifies until it expires; the service knows better.
    assert.equal((await verifyAccessToken(user.accessToken, options())).sub, user.user.id)
    await assert.rejects(
      verifyAccessToken(user.accessToken, { ...options(), introspect }),
      refusedWith('session_revoked'),
    )
    // A bad key is the service's own 401 invalid_api_key.
    await assert.rejects(
      verifyAccessToken(user.accessToken, {
        ...options(),
        introspect: { ...introspect, apiKey: 'ak_live_nope' },
      }),
      refusedWith('invalid_api_key'),
    )
  })
})
