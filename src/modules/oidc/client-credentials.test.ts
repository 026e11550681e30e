// Client credentials at a tenant's issuer (CONTRACT §11), with a real client
// (openid-client) and the token verified with jose against the issuer's jwks: an RFC 9068
// JWT for the API resource, within the machine app's allowedScopes; every refusal answered
// as RFC 6749 says with nothing issued; isolation between tenants; the secret rotation,
// introspection, revocation and deletion of the application; a provider token is not a
// /v1 token; any instance serves any step.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createApiResource,
  createApplication,
  issuerOf,
  oauthError,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  startSecondInstance,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let second: Awaited<ReturnType<typeof startSecondInstance>>
let t: TenantFixture
let resource: { id: string; identifier: string }
let machine: { clientId: string; clientSecret: string; id: string }

before(async (ctx) => {
  server = await startTestServer(ctx)
  second = await startSecondInstance(server)
  t = await createTenant(server)
  resource = await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Reports',
    identifier: `https://reports.example.com/${t.slug}`,
    scopes: [{ name: 'reports:read' }, { name: 'reports:write' }, { name: 'reports:admin' }],
    accessTokenTtlSeconds: 600,
  })
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Nightly job',
    type: 'machine',
    allowedScopes: ['reports:read', 'reports:write'],
  })
  machine = {
    id: made.application.id,
    clientId: made.application.clientId,
    clientSecret: made.clientSecret as string,
  }
})
after(() => second.close())

async function jwks(on: Pick<TestServer, 'request'>, slug: string) {
  const res = await on.request('GET', `/oidc/${slug}/jwks`)
  return createLocalJWKSet(res.body)
}

/** A fresh machine app of tenant `of` (its own grants, so tests do not share tokens). */
async function newMachine(of: TenantFixture, allowedScopes: string[] = []) {
  const made = await createApplication(server, of.slug, of.admin.accessToken, {
    name: 'job',
    type: 'machine',
    allowedScopes,
  })
  return { ...made.application, clientSecret: made.clientSecret as string }
}

test('client credentials: a JWT access token for the resource (RFC 9068), verified against the jwks', async () => {
  const config = await oidcClient(server, t.slug, machine.clientId, machine.clientSecret)
  const tokens = await client.clientCredentialsGrant(config, {
    scope: 'reports:read',
    resource: resource.identifier,
  })
  assert.equal(tokens.token_type.toLowerCase(), 'bearer')
  assert.equal(tokens.expires_in, 600)
  assert.equal(tokens.scope, 'reports:read')
  const header = decodeProtectedHeader(tokens.access_token)
  assert.equal(header.typ, 'at+jwt')
  assert.equal(header.alg, 'RS256')
  const { payload } = await jwtVerify(tokens.access_token, await jwks(server, t.slug), {
    issuer: issuerOf(server, t.slug),
    audience: resource.identifier,
    typ: 'at+jwt',
  })
  assert.equal(payload.client_id, machine.clientId)
  assert.equal(payload.sub, machine.clientId)
  assert.equal(payload.scope, 'reports:read')
  assert.equal((payload.exp as number) - (payload.iat as number), 600)
  assert.equal(typeof payload.jti, 'string')
  // Both allowed scopes at once.
  const both = await client.clientCredentialsGrant(config, {
    scope: 'reports:read reports:write',
    resource: resource.identifier,
  })
  assert.equal(both.scope, 'reports:read reports:write')
})

test('client credentials scope rule: a scope beyond allowedScopes (or not of the resource) is invalid_scope, nothing issued', async () => {
  const config = await oidcClient(server, t.slug, machine.clientId, machine.clientSecret)
  for (const scope of ['reports:admin', 'reports:read reports:admin', 'billing:read', 'openid']) {
    const refused = await unchanged(server, t.tenantId, () =>
      oauthError(client.clientCredentialsGrant(config, { scope, resource: resource.identifier })),
    )
    assert.deepEqual(refused, { error: 'invalid_scope', status: 400 }, scope)
  }
  // A resource the tenant does not have: invalid_target (RFC 8707 §2).
  const unknown = await oauthError(
    client.clientCredentialsGrant(config, { resource: 'https://unknown.example.com/' }),
  )
  assert.equal(unknown.error, 'invalid_target')
})

test('client authentication: a wrong secret is invalid_client (401) and nothing is issued', async () => {
  const config = await oidcClient(server, t.slug, machine.clientId, `${machine.clientSecret}x`)
  const refused = await unchanged(server, t.tenantId, () =>
    oauthError(client.clientCredentialsGrant(config, { resource: resource.identifier })),
  )
  assert.deepEqual(refused, { error: 'invalid_client', status: 401 })
  const unknown = await oidcClient(server, t.slug, 'no-such-client', 'secret')
  assert.equal((await oauthError(client.clientCredentialsGrant(unknown))).error, 'invalid_client')
})

test('isolation: another tenant’s client at this tenant’s issuer is invalid_client; its token is refused here', async () => {
  const other = await createTenant(server)
  const theirs = await newMachine(other)
  const here = await oidcClient(server, t.slug, theirs.clientId, theirs.clientSecret)
  const refused = await unchanged(server, [t.tenantId, other.tenantId], () =>
    oauthError(client.clientCredentialsGrant(here)),
  )
  assert.deepEqual(refused, { error: 'invalid_client', status: 401 })
  // At its own issuer it works; that opaque token is unknown at this tenant's introspection.
  const own = await oidcClient(server, other.slug, theirs.clientId, theirs.clientSecret)
  const token = (await client.clientCredentialsGrant(own)).access_token
  const mine = await oidcClient(server, t.slug, machine.clientId, machine.clientSecret)
  assert.equal((await client.tokenIntrospection(mine, token)).active, false)
  assert.equal((await client.tokenIntrospection(own, token)).active, true)
})

test('secret rotation: the old secret fails at once, the new one works', async () => {
  const app = await newMachine(t, ['reports:read'])
  const before = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  await client.clientCredentialsGrant(before, { resource: resource.identifier })
  const rotated = await server.request(
    'POST',
    `/v1/${t.slug}/applications/${app.id}/secret`,
    undefined,
    { token: t.admin.accessToken },
  )
  assert.equal(rotated.status, 200)
  // On this instance and on the other one, at once.
  for (const on of [server, second]) {
    const old = await oidcClient(on, t.slug, app.clientId, app.clientSecret)
    assert.equal((await oauthError(client.clientCredentialsGrant(old))).error, 'invalid_client')
  }
  const fresh = await oidcClient(second, t.slug, app.clientId, rotated.body.clientSecret)
  const tokens = await client.clientCredentialsGrant(fresh, { resource: resource.identifier })
  assert.equal(typeof tokens.access_token, 'string')
})

test('introspection and revocation (RFC 7662, RFC 7009) of an opaque client-credentials token', async () => {
  const app = await newMachine(t)
  const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  // Without a resource the token is opaque, stored in oidc_models.
  const { access_token } = await client.clientCredentialsGrant(config)
  assert.equal(access_token.split('.').length, 1, 'opaque')
  const active = await client.tokenIntrospection(config, access_token)
  assert.equal(active.active, true)
  assert.equal(active.client_id, app.clientId)
  assert.equal(active.iss, issuerOf(server, t.slug))
  await client.tokenRevocation(config, access_token)
  assert.equal((await client.tokenIntrospection(config, access_token)).active, false)
})

test('deleting the application makes its tokens inactive at once, on every instance', async () => {
  const app = await newMachine(t)
  const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  const { access_token } = await client.clientCredentialsGrant(config)
  // Another application of the tenant introspects it.
  const checker = await oidcClient(second, t.slug, machine.clientId, machine.clientSecret)
  assert.equal((await client.tokenIntrospection(checker, access_token)).active, true)
  const deleted = await server.request(
    'DELETE',
    `/v1/${t.slug}/applications/${app.id}`,
    undefined,
    {
      token: t.admin.accessToken,
    },
  )
  assert.equal(deleted.status, 200)
  assert.equal((await client.tokenIntrospection(checker, access_token)).active, false)
  assert.equal((await oauthError(client.clientCredentialsGrant(config))).error, 'invalid_client')
})

test('state is shared: a token issued by one instance is introspected by the other', async () => {
  const app = await newMachine(t)
  const one = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  const two = await oidcClient(second, t.slug, app.clientId, app.clientSecret)
  const { access_token } = await client.clientCredentialsGrant(one)
  const seen = await client.tokenIntrospection(two, access_token)
  assert.equal(seen.active, true)
  assert.equal(seen.client_id, app.clientId)
  await client.tokenRevocation(two, access_token)
  assert.equal((await client.tokenIntrospection(one, access_token)).active, false)
})

test('a provider token is not a /v1 token: 401 token_invalid at /me', async () => {
  const config = await oidcClient(server, t.slug, machine.clientId, machine.clientSecret)
  const jwt = (
    await client.clientCredentialsGrant(config, {
      scope: 'reports:read',
      resource: resource.identifier,
    })
  ).access_token
  const opaque = (await client.clientCredentialsGrant(config)).access_token
  for (const token of [jwt, opaque]) {
    expectError(
      await server.request('GET', `/v1/${t.slug}/me`, undefined, { token }),
      401,
      'token_invalid',
    )
  }
})
