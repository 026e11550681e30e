// The OpenID provider's discovery (CONTRACT §11): each tenant is an issuer at
// {PUBLIC_URL}/oidc/{slug}, its metadata at the OIDC and RFC 8414 well-known URIs, its
// jwks with public keys only; an unknown or deleted tenant is 404.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { setTenant } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { issuerOf } from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const get = (path: string) => server.request('GET', path)

test('discovery: the tenant is an issuer with every endpoint of §11; registration is not listed by default', async () => {
  const res = await get(`/oidc/${t.slug}/.well-known/openid-configuration`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const doc = res.body
  assert.equal(doc.issuer, issuerOf(server, t.slug))
  // Every endpoint from PUBLIC_URL (CONTRACT §1), not from the address the request reached.
  const base = issuerOf(server, t.slug)
  for (const [name, path] of [
    ['authorization_endpoint', '/auth'],
    ['token_endpoint', '/token'],
    ['userinfo_endpoint', '/me'],
    ['jwks_uri', '/jwks'],
    ['end_session_endpoint', '/session/end'],
    ['introspection_endpoint', '/token/introspection'],
    ['revocation_endpoint', '/token/revocation'],
    ['device_authorization_endpoint', '/device/auth'],
  ]) {
    assert.equal(doc[name], base + path, name)
  }
  assert.equal(doc.registration_endpoint, undefined)
  // RFC 9207: authorization responses carry `iss`; RFC 7636 with S256 only.
  assert.equal(doc.authorization_response_iss_parameter_supported, true)
  assert.deepEqual(doc.code_challenge_methods_supported, ['S256'])
  assert.ok(doc.grant_types_supported.includes('client_credentials'))
  assert.ok(doc.grant_types_supported.includes('urn:ietf:params:oauth:grant-type:device_code'))
  assert.deepEqual([...doc.id_token_signing_alg_values_supported].sort(), ['ES256', 'RS256'])
  assert.equal(doc.backchannel_logout_supported, true)
  // RFC 8414 §3: the same metadata at the well-known URI with the issuer's path appended.
  const rfc8414 = await get(`/.well-known/oauth-authorization-server/oidc/${t.slug}`)
  assert.equal(rfc8414.status, 200)
  assert.deepEqual(rfc8414.body, doc)
})

test('discovery lists exactly what works: code only, the client authentications applications have, PAR and DPoP (CONTRACT §22)', async () => {
  const doc = (await get(`/oidc/${t.slug}/.well-known/openid-configuration`)).body
  const base = issuerOf(server, t.slug)
  assert.deepEqual(Object.keys(doc).sort(), [
    'authorization_endpoint',
    'authorization_response_iss_parameter_supported',
    'backchannel_logout_session_supported',
    'backchannel_logout_supported',
    'claim_types_supported',
    'claims_parameter_supported',
    'claims_supported',
    'code_challenge_methods_supported',
    'device_authorization_endpoint',
    'dpop_signing_alg_values_supported',
    'end_session_endpoint',
    'grant_types_supported',
    'id_token_signing_alg_values_supported',
    'introspection_endpoint',
    'issuer',
    'jwks_uri',
    'pushed_authorization_request_endpoint',
    'request_uri_parameter_supported',
    'response_modes_supported',
    'response_types_supported',
    'revocation_endpoint',
    'scopes_supported',
    'subject_types_supported',
    'token_endpoint',
    'token_endpoint_auth_methods_supported',
    'token_endpoint_auth_signing_alg_values_supported',
    'userinfo_endpoint',
  ])
  assert.deepEqual(doc.response_types_supported, ['code'])
  assert.deepEqual(doc.grant_types_supported, [
    'authorization_code',
    'refresh_token',
    'client_credentials',
    'urn:ietf:params:oauth:grant-type:device_code',
    // RFC 8693, for applications with tokenExchange (CONTRACT §22).
    'urn:ietf:params:oauth:grant-type:token-exchange',
  ])
  assert.deepEqual(doc.token_endpoint_auth_methods_supported, [
    'client_secret_basic',
    'client_secret_post',
    'private_key_jwt',
    'none',
  ])
  // RFC 7523's algorithms, no HS256: client_secret_jwt is not offered.
  assert.deepEqual(doc.token_endpoint_auth_signing_alg_values_supported, [
    'RS256',
    'PS256',
    'ES256',
    'Ed25519',
    'EdDSA',
  ])
  assert.deepEqual(doc.dpop_signing_alg_values_supported, ['ES256', 'Ed25519', 'EdDSA'])
  // CONTRACT §11: RS256 by default, ES256 offered.
  assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256', 'ES256'])
  // CONTRACT §17, Tokens: the scope `roles` and its claim; §18: `organizations` and its two.
  assert.deepEqual(doc.scopes_supported, [
    'openid',
    'offline_access',
    'email',
    'profile',
    'roles',
    'organizations',
  ])
  for (const claim of ['roles', 'organizations', 'organization_roles']) {
    assert.ok(doc.claims_supported.includes(claim), claim)
  }
  assert.equal(doc.claims_parameter_supported, false)
  assert.equal(doc.request_uri_parameter_supported, false)
  // RFC 9126 §5: PAR is served, at the issuer; a request without client authentication
  // is refused (401 invalid_client), nothing stored.
  assert.equal(doc.pushed_authorization_request_endpoint, `${base}/request`)
  const par = await server.request('POST', `/oidc/${t.slug}/request`, undefined, {
    raw: 'client_id=x&response_type=code',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  assert.equal(par.status, 401)
  assert.equal(par.body.error, 'invalid_client')
  assert.ok(doc.token_endpoint.startsWith(base))
})

test('discovery: a forged Host or X-Forwarded-Host / -Proto never moves the endpoints off PUBLIC_URL', async () => {
  const forged = await server.request(
    'GET',
    `/oidc/${t.slug}/.well-known/openid-configuration`,
    undefined,
    {
      headers: {
        host: 'evil.example',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'https',
      },
    },
  )
  assert.equal(forged.status, 200)
  for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri']) {
    assert.equal(forged.body[name].split('/oidc/')[0], server.deps.config.publicUrl, name)
  }
})

test('discovery isolation: two tenants are two issuers', async () => {
  const other = await createTenant(server)
  const a = (await get(`/oidc/${t.slug}/.well-known/openid-configuration`)).body
  const b = (await get(`/oidc/${other.slug}/.well-known/openid-configuration`)).body
  assert.notEqual(a.issuer, b.issuer)
  assert.equal(b.issuer, issuerOf(server, other.slug))
  assert.ok(b.token_endpoint.includes(`/oidc/${other.slug}/`))
})

test('an unknown or deleted tenant is 404 tenant_not_found at every provider path', async () => {
  for (const path of [
    '/oidc/no-such-tenant-x1/.well-known/openid-configuration',
    '/oidc/no-such-tenant-x1/jwks',
    '/.well-known/oauth-authorization-server/oidc/no-such-tenant-x1',
    '/oidc/NOT%00A%20SLUG/jwks',
  ]) {
    expectError(await get(path), 404, 'tenant_not_found')
  }
  const token = await server.request('POST', '/oidc/no-such-tenant-x1/token', undefined, {
    raw: 'grant_type=client_credentials',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  expectError(token, 404, 'tenant_not_found')
  const closed = await createTenant(server)
  assert.equal((await get(`/oidc/${closed.slug}/jwks`)).status, 200)
  await setTenant(server, closed.slug, { deletedAt: new Date() })
  expectError(
    await get(`/oidc/${closed.slug}/.well-known/openid-configuration`),
    404,
    'tenant_not_found',
  )
  expectError(await get(`/oidc/${closed.slug}/jwks`), 404, 'tenant_not_found')
})

test('jwks: the public keys of OIDC_SIGNING_KEYS (RS256 and ES256), never a private member', async () => {
  const res = await get(`/oidc/${t.slug}/jwks`)
  assert.equal(res.status, 200)
  const { keys } = res.body as { keys: Record<string, string>[] }
  assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'RS256'])
  for (const key of keys) {
    assert.equal(key.use, 'sig')
    assert.equal(typeof key.kid, 'string')
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) {
      assert.equal(key[secret], undefined, `${key.kty} key without ${secret}`)
    }
  }
  // The same keys for every tenant (one key set for the service), with stable ids.
  const other = await createTenant(server)
  assert.deepEqual((await get(`/oidc/${other.slug}/jwks`)).body, res.body)
})
