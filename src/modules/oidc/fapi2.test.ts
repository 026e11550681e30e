// The FAPI 2.0 Security Profile per application (CONTRACT §22): profile fapi2 implies PAR
// and DPoP and needs private_key_jwt; PKCE S256 is required; the full flow (PAR, PKCE,
// private_key_jwt, DPoP) through the hosted pages ends in DPoP-bound tokens, the
// authorization response carrying iss (openid-client checks it) and the code living 60 s.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { before, test } from 'node:test'
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
import { expectValidation } from '../../../test/envelope.ts'
import {
  createApiResource,
  createApplication,
  grantThroughPages,
  issuerOf,
  oauthError,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'
import { and, eq } from '../../db/orm.ts'
import { oidcModels } from '../../db/schema.ts'

const REDIRECT = 'https://bank.example.com/callback'

let server: TestServer
let t: TenantFixture
let signing: CryptoKeyPair
let jwk: Record<string, unknown>
let secret: string
let app: { id: string; clientId: string } & Record<string, unknown>

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  signing = await generateKeyPair('ES256', { extractable: true })
  jwk = { ...(await exportJWK(signing.publicKey)), alg: 'ES256' }
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Bank',
    type: 'web',
    redirectUris: [REDIRECT],
    profile: 'fapi2',
    tokenEndpointAuthMethod: 'private_key_jwt',
    jwks: { keys: [jwk] },
  })
  app = made.application as typeof app
  secret = made.clientSecret as string
})

const config = () =>
  oidcClient(
    server,
    t.slug,
    app.clientId,
    undefined,
    undefined,
    client.PrivateKeyJwt(signing.privateKey),
  )

test('fapi2: the record shows PAR and DPoP required with private_key_jwt', () => {
  assert.equal(app.profile, 'fapi2')
  assert.equal(app.requirePushedAuthorizationRequests, true)
  assert.equal(app.requireDpop, true)
  assert.equal(app.tokenEndpointAuthMethod, 'private_key_jwt')
})

test('fapi2: PAR, PKCE S256, private_key_jwt and DPoP through the hosted pages give DPoP-bound tokens; the code lives at most 60 s', async () => {
  await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Accounts',
    identifier: `https://accounts.example.com/${t.slug}`,
    scopes: [{ name: 'accounts:read' }],
  })
  const who = await signup(server, t.slug)
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  await browser.post(`/t/${t.slug}/sign-in`, { email: who.email, password: who.password })
  const dpopKey = await generateKeyPair('ES256', { extractable: true })
  const DPoP = client.getDPoPHandle(await config(), dpopKey)
  const tokens = await grantThroughPages(
    server,
    t.slug,
    browser,
    {
      clientId: app.clientId,
      redirectUri: REDIRECT,
      auth: client.PrivateKeyJwt(signing.privateKey),
    },
    {},
    { par: true, dpop: DPoP },
  )
  assert.equal(tokens.token_type, 'dpop')
  assert.equal(tokens.claims()?.sub, who.user.id)
  assert.equal(tokens.claims()?.iss, issuerOf(server, t.slug))
  const jkt = await calculateJwkThumbprint(await exportJWK(dpopKey.publicKey))
  // The opaque userinfo token is bound: introspection says so.
  const introspected = await client.tokenIntrospection(await config(), tokens.access_token)
  assert.deepEqual(introspected.cnf, { jkt })
  // The code (spent now, its row kept till it expires) was issued for 60 s at most.
  const codes = await server.deps.db
    .select()
    .from(oidcModels)
    .where(and(eq(oidcModels.tenantId, t.tenantId), eq(oidcModels.model, 'AuthorizationCode')))
  assert.ok(codes.length >= 1)
  for (const row of codes) {
    const { iat, exp } = row.payload as { iat: number; exp: number }
    assert.ok(exp - iat <= 60, `${exp - iat} s`)
  }
  // Without a DPoP proof at the exchange the code gets nothing (requireDpop).
  const refused = await oauthError(
    grantThroughPages(
      server,
      t.slug,
      browser,
      {
        clientId: app.clientId,
        redirectUri: REDIRECT,
        auth: client.PrivateKeyJwt(signing.privateKey),
      },
      {},
      { par: true },
    ),
  )
  assert.equal(refused.error, 'invalid_grant')
})

test('fapi2 rules: a plain authorization request, a push without PKCE and a client secret are refused', async () => {
  const state = randomBytes(8).toString('hex')
  const query = new URLSearchParams({
    client_id: app.clientId,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: REDIRECT,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state,
  })
  const plain = await unchanged(server, t.tenantId, () =>
    fetch(`${server.url}/oidc/${t.slug}/auth?${query}`, { redirect: 'manual' }),
  )
  const back = new URL(plain.headers.get('location') as string)
  assert.equal(back.searchParams.get('error'), 'invalid_request')
  // PKCE is required of a fapi2 application, confidential as it is.
  const noPkce = await oauthError(
    client.buildAuthorizationUrlWithPAR(await config(), {
      redirect_uri: REDIRECT,
      scope: 'openid',
    }),
  )
  assert.deepEqual(noPkce, { error: 'invalid_request', status: 400 })
  // The secret it was given at creation does not authenticate it: private_key_jwt only.
  const bySecret = await oidcClient(server, t.slug, app.clientId, secret)
  const refused = await oauthError(
    client.buildAuthorizationUrlWithPAR(bySecret, { redirect_uri: REDIRECT, scope: 'openid' }),
  )
  assert.deepEqual(refused, { error: 'invalid_client', status: 401 })
})

test('fapi2 settings: without private_key_jwt, on a spa, or with PAR or DPoP turned off: 400 validation, nothing changed', async () => {
  for (const body of [
    { name: 'x', type: 'web', redirectUris: [REDIRECT], profile: 'fapi2' },
    {
      name: 'x',
      type: 'spa',
      redirectUris: [REDIRECT],
      profile: 'fapi2',
    },
    {
      name: 'x',
      type: 'web',
      redirectUris: [REDIRECT],
      profile: 'fapi2',
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwks: { keys: [jwk] },
      requireDpop: false,
    },
    { name: 'x', type: 'web', redirectUris: [REDIRECT], profile: 'fapi1' },
  ]) {
    const res = await unchanged(server, t.tenantId, () =>
      server.request('POST', `/v1/${t.slug}/applications`, body, { token: t.admin.accessToken }),
    )
    expectValidation(res)
  }
  const patch = await unchanged(server, t.tenantId, () =>
    server.request(
      'PATCH',
      `/v1/${t.slug}/applications/${app.id}`,
      { requirePushedAuthorizationRequests: false },
      { token: t.admin.accessToken },
    ),
  )
  expectValidation(patch, 'body.requirePushedAuthorizationRequests')
})
