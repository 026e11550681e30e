// Client authentication per application (CONTRACT §22; RFC 6749 §2.3, RFC 7523): each
// application authenticates the one way it is registered for; private_key_jwt with the
// application's jwks or its jwksUri (fetched under the egress rule), each assertion's jti
// used once even by a concurrent burst; dynamic registration accepts the same methods;
// every bad setting is 400 validation with nothing changed.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { before, test } from 'node:test'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
import { expectValidation } from '../../../test/envelope.ts'
import {
  createApiResource,
  createApplication,
  issuerOf,
  oauthError,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { applications, oidcModels } from '../../db/schema.ts'
import { poolOf } from './pool.ts'

let server: TestServer
let t: TenantFixture
let keys: CryptoKeyPair
let publicJwk: Record<string, unknown>
let resource: { identifier: string }

before(async (ctx) => {
  // OIDC_BACKCHANNEL_ALLOW_LOOPBACK: a jwksUri on this machine (the test's key server).
  server = await startTestServer(ctx, { oidcBackchannelAllowLoopback: true })
  t = await createTenant(server)
  keys = await generateKeyPair('ES256', { extractable: true })
  publicJwk = { ...(await exportJWK(keys.publicKey)), alg: 'ES256', use: 'sig' }
  resource = await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Ledger',
    identifier: `https://ledger.example.com/${t.slug}`,
    scopes: [{ name: 'ledger:read' }],
  })
})

const tokenUrl = () => `${server.url}/oidc/${t.slug}/token`

/** A client assertion (RFC 7523 §3) for `clientId`, signed with `key`. */
function assertion(clientId: string, key: CryptoKey = keys.privateKey, jti = randomUUID()) {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(issuerOf(server, t.slug))
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime('60s')
    .sign(key)
}

/** A client-credentials request authenticated by `jwt`, as raw form POST. */
function tokenWith(jwt: string) {
  return fetch(tokenUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: jwt,
    }),
  })
}

async function keyedMachine(extra: Record<string, unknown> = { jwks: { keys: [publicJwk] } }) {
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Signed job',
    type: 'machine',
    allowedScopes: ['ledger:read'],
    tokenEndpointAuthMethod: 'private_key_jwt',
    ...extra,
  })
  return { ...made.application, clientSecret: made.clientSecret as string }
}

test('private_key_jwt (RFC 7523): openid-client signs in with the key of jwks; the secret is refused', async () => {
  const app = await keyedMachine()
  const record = app as unknown as Record<string, unknown>
  assert.equal(record.tokenEndpointAuthMethod, 'private_key_jwt')
  assert.deepEqual(record.jwks, { keys: [publicJwk] })
  const config = await oidcClient(
    server,
    t.slug,
    app.clientId,
    undefined,
    undefined,
    client.PrivateKeyJwt(keys.privateKey),
  )
  const tokens = await client.clientCredentialsGrant(config, {
    scope: 'ledger:read',
    resource: resource.identifier,
  })
  assert.equal(tokens.scope, 'ledger:read')
  // The registered method only: the secret (kept for the app) does not authenticate it.
  const bySecret = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  const refused = await unchanged(server, t.tenantId, () =>
    oauthError(client.clientCredentialsGrant(bySecret)),
  )
  assert.deepEqual(refused, { error: 'invalid_client', status: 401 })
  // Another key than the registered one.
  const other = await generateKeyPair('ES256')
  const wrongKey = await tokenWith(await assertion(app.clientId, other.privateKey))
  assert.equal(wrongKey.status, 401)
  assert.equal((await wrongKey.json()).error, 'invalid_client')
})

test('private_key_jwt replay rule: an assertion is used once; a concurrent burst of one assertion gets exactly one token', async () => {
  const app = await keyedMachine()
  const jwt = await assertion(app.clientId)
  const first = await tokenWith(jwt)
  assert.equal(first.status, 200)
  const again = await tokenWith(jwt)
  assert.equal(again.status, 401)
  assert.equal((await again.json()).error, 'invalid_client')
  // Ten at once with one fresh assertion: the INSERT ... ON CONFLICT lets one through.
  const burst = await assertion(app.clientId)
  const answers = await Promise.all(Array.from({ length: 10 }, () => tokenWith(burst)))
  const statuses = answers.map((res) => res.status).sort()
  assert.deepEqual(statuses, [200, ...Array(9).fill(401)])
  // The check itself, as the library calls it for assertions and DPoP proofs alike: twenty
  // concurrent first uses of one jti, exactly one is first (a find-then-save lets several).
  const pool = poolOf(server.deps as unknown as Parameters<typeof poolOf>[0])
  assert.ok(pool)
  const { ReplayDetection } = pool.provider({ id: t.tenantId, slug: t.slug }) as unknown as {
    ReplayDetection: { unique(iss: string, jti: string, exp: number): Promise<boolean> }
  }
  const exp = Math.floor(Date.now() / 1000) + 60
  const jti = randomUUID()
  const firsts = await Promise.all(
    Array.from({ length: 20 }, () => ReplayDetection.unique(app.clientId, jti, exp)),
  )
  assert.equal(firsts.filter(Boolean).length, 1)
})

test('private_key_jwt by jwksUri: the keys are fetched from the URL, and a jwksUri aimed at an internal address is never fetched', async (ctx) => {
  let fetched = 0
  const keyServer = createServer((_req, res) => {
    fetched++
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ keys: [publicJwk] }))
  })
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve))
  ctx.after(() => keyServer.close())
  const { port } = keyServer.address() as AddressInfo
  const app = await keyedMachine({ jwksUri: `http://localhost:${port}/jwks.json` })
  assert.equal(
    (app as unknown as Record<string, unknown>).jwksUri,
    `http://localhost:${port}/jwks.json`,
  )
  const ok = await tokenWith(await assertion(app.clientId))
  assert.equal(ok.status, 200, await ok.clone().text())
  assert.ok(fetched >= 1)
  // A row naming an internal address that is no loopback host name (written past the API's
  // check, as a stale or forged row would be): the egress guard refuses the connection.
  const other = await keyedMachine({ jwksUri: `http://localhost:${port}/other.json` })
  await server.deps.db
    .update(applications)
    .set({ jwksUri: `http://10.255.255.1:${port}/jwks.json` })
    .where(and(eq(applications.tenantId, t.tenantId), eq(applications.id, other.id)))
  const before = fetched
  const refused = await tokenWith(await assertion(other.clientId))
  assert.equal(refused.status, 401)
  assert.equal((await refused.json()).error, 'invalid_client')
  assert.equal(fetched, before)
})

test('client_secret_post: the secret in the body works; the record says the method', async () => {
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Posting job',
    type: 'machine',
    tokenEndpointAuthMethod: 'client_secret_post',
  })
  assert.equal(
    (made.application as unknown as Record<string, unknown>).tokenEndpointAuthMethod,
    'client_secret_post',
  )
  const config = await oidcClient(
    server,
    t.slug,
    made.application.clientId,
    undefined,
    undefined,
    client.ClientSecretPost(made.clientSecret as string),
  )
  assert.equal(typeof (await client.clientCredentialsGrant(config)).access_token, 'string')
})

test('client authentication settings: every impossible combination is 400 validation and changes nothing', async () => {
  const privateJwk = { ...(await exportJWK(keys.privateKey)), alg: 'ES256' }
  const bodies: Record<string, unknown>[] = [
    { name: 'a', type: 'machine', tokenEndpointAuthMethod: 'private_key_jwt' },
    {
      name: 'a',
      type: 'machine',
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwks: { keys: [publicJwk] },
      jwksUri: 'https://keys.example.com/jwks.json',
    },
    {
      name: 'a',
      type: 'machine',
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwks: { keys: [privateJwk] },
    },
    {
      name: 'a',
      type: 'machine',
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'nope', y: 'nope' }] },
    },
    { name: 'a', type: 'machine', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [] } },
    {
      name: 'a',
      type: 'machine',
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwksUri: 'http://keys.example.com/jwks.json',
    },
    {
      name: 'a',
      type: 'machine',
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwksUri: 'https://10.0.0.8/jwks.json',
    },
    { name: 'a', type: 'machine', jwks: { keys: [publicJwk] } },
    { name: 'a', type: 'machine', tokenEndpointAuthMethod: 'none' },
    { name: 'a', type: 'machine', tokenEndpointAuthMethod: 'client_secret_jwt' },
    {
      name: 'a',
      type: 'spa',
      redirectUris: ['https://a.example.com/cb'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    },
    { name: 'a', type: 'spa', redirectUris: ['https://a.example.com/cb'], tokenExchange: true },
  ]
  for (const body of bodies) {
    const res = await unchanged(server, t.tenantId, () =>
      server.request('POST', `/v1/${t.slug}/applications`, body, { token: t.admin.accessToken }),
    )
    expectValidation(res)
  }
  // PATCH: a secret app turned to private_key_jwt without keys, unchanged.
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'b',
    type: 'machine',
  })
  const path = `/v1/${t.slug}/applications/${made.application.id}`
  const patch = await unchanged(server, t.tenantId, () =>
    server.request(
      'PATCH',
      path,
      { tokenEndpointAuthMethod: 'private_key_jwt' },
      {
        token: t.admin.accessToken,
      },
    ),
  )
  expectValidation(patch, 'body.jwks')
  // And with keys it switches; back to a secret clears the keys.
  const keyed = await server.request(
    'PATCH',
    path,
    { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [publicJwk] } },
    { token: t.admin.accessToken },
  )
  assert.equal(keyed.status, 200, JSON.stringify(keyed.body))
  const back = await server.request(
    'PATCH',
    path,
    { tokenEndpointAuthMethod: 'client_secret_basic' },
    { token: t.admin.accessToken },
  )
  assert.equal(back.body.application.jwks, null)
})

test('dynamic registration accepts private_key_jwt with jwks (the same methods as the admin API), and the client signs in with its key', async () => {
  const other = await createTenant(server)
  const on = await server.request(
    'PATCH',
    `/v1/${other.slug}/tenant`,
    { dynamicClientRegistration: true },
    { token: other.admin.accessToken },
  )
  assert.equal(on.status, 200)
  const res = await server.request('POST', `/oidc/${other.slug}/reg`, {
    redirect_uris: ['https://rp.example.com/cb'],
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [publicJwk] },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.token_endpoint_auth_method, 'private_key_jwt')
  assert.equal(res.body.client_secret, undefined)
  const listed = await server.request('GET', `/v1/${other.slug}/applications`, undefined, {
    token: other.admin.accessToken,
  })
  const app = listed.body.items.find((a: { clientId: string }) => a.clientId === res.body.client_id)
  assert.equal(app.tokenEndpointAuthMethod, 'private_key_jwt')
  // A registration without keys, or with a private key: invalid_client_metadata, nothing stored.
  for (const body of [
    { redirect_uris: ['https://rp.example.com/cb'], token_endpoint_auth_method: 'private_key_jwt' },
    {
      redirect_uris: ['https://rp.example.com/cb'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [{ ...(await exportJWK(keys.privateKey)) }] },
    },
  ]) {
    const refused = await unchanged(server, other.tenantId, () =>
      server.request('POST', `/oidc/${other.slug}/reg`, body),
    )
    assert.equal(refused.status, 400)
    assert.equal(refused.body.error, 'invalid_client_metadata')
  }
  // Its replay record lives in the tenant's rows (one per assertion).
  const rows = await server.deps.db
    .select()
    .from(oidcModels)
    .where(and(eq(oidcModels.tenantId, t.tenantId), eq(oidcModels.model, 'ReplayDetection')))
  assert.ok(rows.length >= 2)
})
