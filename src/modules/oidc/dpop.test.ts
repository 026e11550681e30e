// DPoP (RFC 9449; CONTRACT §22) at a tenant's issuer, with openid-client's DPoP handle and
// proofs made by hand with jose: a proof at the token endpoint binds the access token
// (cnf.jkt, token_type DPoP) and, for a public client, the refresh token; userinfo and
// introspection honour the binding; a proof of another key, method, URL or token, or a
// replayed one, is refused; a stale proof is asked for the server's nonce; an application
// with requireDpop gets no bearer token.
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
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
import { and, asc, eq, ne } from '../../db/orm.ts'
import { oidcModels } from '../../db/schema.ts'

const REDIRECT = 'https://app.example.com/callback'

let server: TestServer
let t: TenantFixture
let resource: { identifier: string }
let key: CryptoKeyPair
let jkt: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  resource = await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Orders',
    identifier: `https://orders.example.com/${t.slug}`,
    scopes: [{ name: 'orders:read' }],
  })
  key = await generateKeyPair('ES256', { extractable: true })
  jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey))
})

async function machine(extra: Record<string, unknown> = {}) {
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'job',
    type: 'machine',
    allowedScopes: ['orders:read'],
    ...extra,
  })
  const config = await oidcClient(
    server,
    t.slug,
    made.application.clientId,
    made.clientSecret as string,
  )
  return { ...made.application, clientSecret: made.clientSecret as string, config }
}

/** A DPoP proof (RFC 9449 §4.2) by `pair` for `htm` `url` (the public URL). */
async function proof(
  pair: CryptoKeyPair,
  htm: string,
  url: string,
  claims: Record<string, unknown> = {},
  iat = Math.floor(Date.now() / 1000),
) {
  return new SignJWT({ htm, htu: url, jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(pair.publicKey) })
    .setIssuedAt(iat)
    .sign(pair.privateKey)
}

/** The tenant's provider rows but the replay records: the tokens, grants and sessions. */
async function providerState() {
  return server.deps.db
    .select()
    .from(oidcModels)
    .where(and(eq(oidcModels.tenantId, t.tenantId), ne(oidcModels.model, 'ReplayDetection')))
    .orderBy(asc(oidcModels.model), asc(oidcModels.id))
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url')
const userinfoUrl = () => `${issuerOf(server, t.slug)}/me`

/** GET userinfo with `authorization` and an optional DPoP header. */
function userinfo(authorization: string, dpop?: string) {
  return fetch(`${server.url}/oidc/${t.slug}/me`, {
    headers: { authorization, ...(dpop ? { dpop } : {}) },
  })
}

test('DPoP binds a client-credentials token: token_type DPoP, cnf.jkt the key thumbprint; introspection says so', async () => {
  const app = await machine()
  const DPoP = client.getDPoPHandle(app.config, key)
  const jwt = await client.clientCredentialsGrant(
    app.config,
    { scope: 'orders:read', resource: resource.identifier },
    { DPoP },
  )
  assert.equal(jwt.token_type, 'dpop')
  assert.deepEqual(decodeJwt(jwt.access_token).cnf, { jkt })
  const opaque = await client.clientCredentialsGrant(app.config, {}, { DPoP })
  assert.equal(opaque.token_type, 'dpop')
  const seen = await client.tokenIntrospection(app.config, opaque.access_token)
  assert.equal(seen.active, true)
  assert.equal(seen.token_type, 'DPoP')
  assert.deepEqual(seen.cnf, { jkt })
  // Without a proof the same application gets a bearer token (requireDpop is off).
  const bearer = await client.clientCredentialsGrant(app.config)
  assert.equal(bearer.token_type, 'bearer')
})

test('requireDpop: an application with it gets no bearer token (invalid_grant, nothing issued); with a proof it gets a bound one', async () => {
  const app = await machine({ requireDpop: true })
  assert.equal((app as unknown as Record<string, unknown>).requireDpop, true)
  const refused = await unchanged(server, t.tenantId, () =>
    oauthError(client.clientCredentialsGrant(app.config)),
  )
  assert.deepEqual(refused, { error: 'invalid_grant', status: 400 })
  const DPoP = client.getDPoPHandle(app.config, key)
  const bound = await client.clientCredentialsGrant(app.config, {}, { DPoP })
  assert.equal(bound.token_type, 'dpop')
})

test('DPoP for a public client: the code exchange binds the access and the refresh token; userinfo needs a matching proof', async () => {
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Browser app',
    type: 'spa',
    redirectUris: [REDIRECT],
  })
  const who = await signup(server, t.slug)
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  await browser.post(`/t/${t.slug}/sign-in`, { email: who.email, password: who.password })
  const config = await oidcClient(server, t.slug, made.application.clientId)
  const DPoP = client.getDPoPHandle(config, key)
  const tokens = await grantThroughPages(
    server,
    t.slug,
    browser,
    { clientId: made.application.clientId, redirectUri: REDIRECT },
    {},
    { dpop: DPoP },
  )
  assert.equal(tokens.token_type, 'dpop')
  const at = tokens.access_token
  const rt = tokens.refresh_token as string
  assert.ok(rt)

  // Userinfo with a matching proof.
  const ok = await userinfo(`DPoP ${at}`, await proof(key, 'GET', userinfoUrl(), { ath: ath(at) }))
  assert.equal(ok.status, 200)
  assert.equal((await ok.json()).sub, who.user.id)
  // Every mismatch is refused (401) and the token stays good.
  const other = await generateKeyPair('ES256', { extractable: true })
  const refusals: [string, string, string | undefined][] = [
    ['as a bearer token', `Bearer ${at}`, undefined],
    ['without a proof', `DPoP ${at}`, undefined],
    ['another key', `DPoP ${at}`, await proof(other, 'GET', userinfoUrl(), { ath: ath(at) })],
    ['another method', `DPoP ${at}`, await proof(key, 'POST', userinfoUrl(), { ath: ath(at) })],
    [
      'another URL',
      `DPoP ${at}`,
      await proof(key, 'GET', `${issuerOf(server, t.slug)}/token`, { ath: ath(at) }),
    ],
    ['another token', `DPoP ${at}`, await proof(key, 'GET', userinfoUrl(), { ath: ath('x') })],
    ['no ath', `DPoP ${at}`, await proof(key, 'GET', userinfoUrl())],
  ]
  for (const [why, authorization, dpop] of refusals) {
    const res = await userinfo(authorization, dpop)
    // A DPoP scheme without its proof is a malformed request (400), the rest 401.
    assert.equal(res.status, dpop || authorization.startsWith('Bearer') ? 401 : 400, why)
    assert.match(
      res.headers.get('www-authenticate') ?? '',
      /error="invalid_(token|dpop_proof|request)"/,
      why,
    )
  }
  // A proof is used once.
  const once = await proof(key, 'GET', userinfoUrl(), { ath: ath(at) })
  assert.equal((await userinfo(`DPoP ${at}`, once)).status, 200)
  const replayed = await userinfo(`DPoP ${at}`, once)
  assert.equal(replayed.status, 401)
  // (oidc-provider's public description stays "invalid token provided"; a fresh proof
  // for the same token passes below.)
  assert.match(replayed.headers.get('www-authenticate') ?? '', /error="invalid_token"/)
  // A proof too old is answered with a nonce to use (RFC 9449 §8); with it the proof passes.
  const stale = await userinfo(
    `DPoP ${at}`,
    await proof(key, 'GET', userinfoUrl(), { ath: ath(at) }, Math.floor(Date.now() / 1000) - 600),
  )
  assert.equal(stale.status, 401)
  assert.match(stale.headers.get('www-authenticate') ?? '', /use_dpop_nonce/)
  const nonce = stale.headers.get('dpop-nonce')
  assert.ok(nonce)
  const withNonce = await userinfo(
    `DPoP ${at}`,
    await proof(
      key,
      'GET',
      userinfoUrl(),
      { ath: ath(at), nonce },
      Math.floor(Date.now() / 1000) - 600,
    ),
  )
  assert.equal(withNonce.status, 200)

  // The refresh token is bound too: another key or no proof is invalid_grant, nothing issued.
  const bare = await oidcClient(server, t.slug, made.application.clientId)
  const otherHandle = client.getDPoPHandle(bare, other)
  for (const options of [{ DPoP: otherHandle }, {}]) {
    // A refused proof's jti is still recorded (ReplayDetection); no token, grant or session moves.
    const before = await providerState()
    const refused = await oauthError(client.refreshTokenGrant(bare, rt, undefined, options))
    assert.equal(refused.error, 'invalid_grant')
    assert.deepEqual(await providerState(), before)
  }
  const refreshed = await client.refreshTokenGrant(config, rt, undefined, { DPoP })
  assert.equal(refreshed.token_type, 'dpop')
})

test('DPoP at the token endpoint: a proof for another URL or method, or a replayed one, is invalid_dpop_proof and nothing is issued', async () => {
  const app = await machine()
  const tokenUrl = `${issuerOf(server, t.slug)}/token`
  const send = (dpop: string) =>
    fetch(`${server.url}/oidc/${t.slug}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
        dpop,
      },
      body: 'grant_type=client_credentials',
    })
  for (const dpop of [
    await proof(key, 'POST', `${issuerOf(server, t.slug)}/me`),
    await proof(key, 'GET', tokenUrl),
    'not-a-jwt',
  ]) {
    const res = await unchanged(server, t.tenantId, () => send(dpop))
    assert.equal(res.status, 400)
    assert.equal((await res.json()).error, 'invalid_dpop_proof')
  }
  const once = await proof(key, 'POST', tokenUrl)
  assert.equal((await send(once)).status, 200)
  const again = await send(once)
  assert.equal(again.status, 400)
  assert.match(JSON.stringify(await again.json()), /invalid_(grant|dpop_proof)/)
})
