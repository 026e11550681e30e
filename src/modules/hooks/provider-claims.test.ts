// custom_access_token at the tenant's OpenID provider (CONTRACT §21): client credentials
// with a real client (openid-client), the JWT verified against the issuer's jwks; the hook
// is told no user and the application's id; reserved claims are the provider's; a failure
// under onFailure deny issues nothing.
import assert from 'node:assert/strict'
import { before, type TestContext, test } from 'node:test'
import { createLocalJWKSet, jwtVerify } from 'jose'
import * as client from 'openid-client'
import {
  createApiResource,
  createApplication,
  issuerOf,
  oauthError,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import { receiver, verify } from '../../../test/fixtures/webhooks.ts'
import { createTenant, startTestServer, type TestServer } from '../../../test/helpers.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t, { webhookAllowPrivate: true })
})

test('client credentials: the hook’s claims are in the provider’s JWT; user null and clientId told; reserved ones dropped; deny issues nothing', async (t: TestContext) => {
  const tenant = await createTenant(server)
  const resource = await createApiResource(server, tenant.slug, tenant.admin.accessToken, {
    name: 'Reports',
    identifier: `https://reports.example.com/${tenant.slug}`,
    scopes: [{ name: 'reports:read' }],
  })
  const made = await createApplication(server, tenant.slug, tenant.admin.accessToken, {
    name: 'job',
    type: 'machine',
    allowedScopes: ['reports:read'],
  })
  let answer: unknown = { claims: { team: 'blue', client_id: 'forged', scope: 'everything' } }
  const sink = await receiver(t, (_n, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(answer))
  })
  const created = await server.request(
    'POST',
    `/v1/${tenant.slug}/hooks`,
    { event: 'custom_access_token', url: sink.url },
    { token: tenant.admin.accessToken },
  )
  assert.equal(created.status, 200, JSON.stringify(created.body))
  const { clientId } = made.application
  const config = await oidcClient(server, tenant.slug, clientId, made.clientSecret as string)
  const tokens = await client.clientCredentialsGrant(config, {
    scope: 'reports:read',
    resource: resource.identifier,
  })
  const keys = createLocalJWKSet((await server.request('GET', `/oidc/${tenant.slug}/jwks`)).body)
  const { payload } = await jwtVerify(tokens.access_token, keys, {
    issuer: issuerOf(server, tenant.slug),
    audience: resource.identifier,
  })
  assert.equal(payload.team, 'blue')
  assert.equal(payload.client_id, clientId, 'reserved claims are the provider’s')
  assert.equal(payload.scope, 'reports:read')
  const call = verify(created.body.secret, sink.received[0])
  assert.equal(call.event, 'custom_access_token')
  assert.equal(call.user, null)
  assert.equal(call.context.clientId, clientId)

  answer = 'not an object'
  await server.request(
    'PATCH',
    `/v1/${tenant.slug}/hooks/${created.body.hook.id}`,
    { onFailure: 'deny' },
    { token: tenant.admin.accessToken },
  )
  const refused = await oauthError(
    client.clientCredentialsGrant(config, { scope: 'reports:read', resource: resource.identifier }),
  )
  assert.deepEqual(refused, { error: 'invalid_grant', status: 400 })
})
