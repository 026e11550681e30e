// Token exchange (RFC 8693; CONTRACT §22) at a tenant's issuer, over HTTP with openid-client's
// genericGrantRequest: a confidential application with tokenExchange trades a user's access
// token of this tenant (the service's own §4 token, or one the provider issued) for a JWT
// for another API resource of the tenant, within the user's role, with `act` when its own
// client-credentials token is the actor; another tenant's token, a revoked or ended
// session's token and a client's own token are invalid_grant; an application without
// tokenExchange is refused (invalid_request, oidc-provider's answer); nothing is issued by a refusal.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  jwtVerify,
} from 'jose'
import * as client from 'openid-client'
import { setUser } from '../../../test/db.ts'
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
import { TOKEN_EXCHANGE } from './clients.ts'

const ACCESS = 'urn:ietf:params:oauth:token-type:access_token'
const REDIRECT = 'https://app.example.com/callback'

let server: TestServer
let t: TenantFixture
let orders: { identifier: string }
let exchanger: { clientId: string; config: client.Configuration }

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  orders = await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Orders',
    identifier: `https://orders.example.com/${t.slug}`,
    scopes: [{ name: 'orders:read' }, { name: 'orders:admin', roles: ['Admin'] }],
    accessTokenTtlSeconds: 300,
  })
  exchanger = await machine(t, { tokenExchange: true })
})

async function machine(of: TenantFixture, extra: Record<string, unknown>) {
  const made = await createApplication(server, of.slug, of.admin.accessToken, {
    name: 'Gateway',
    type: 'machine',
    ...extra,
  })
  const config = await oidcClient(
    server,
    of.slug,
    made.application.clientId,
    made.clientSecret as string,
  )
  return { clientId: made.application.clientId, config }
}

/** A Member's service access token (CONTRACT §4) of tenant `of`, and its refresh token. */
async function memberToken(of: TenantFixture) {
  const who = await signup(server, of.slug)
  const login = await server.request('POST', `/v1/${of.slug}/auth/login`, {
    email: who.email,
    password: who.password,
  })
  assert.equal(login.status, 200)
  return { who, access: login.body.accessToken as string, refresh: login.body.refreshToken }
}

function exchange(
  config: client.Configuration,
  subjectToken: string,
  params: Record<string, string> = {},
) {
  return client.genericGrantRequest(config, TOKEN_EXCHANGE, {
    subject_token: subjectToken,
    subject_token_type: ACCESS,
    resource: orders.identifier,
    ...params,
  })
}

async function verified(token: string) {
  const jwks = await server.request('GET', `/oidc/${t.slug}/jwks`)
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks.body), {
    issuer: issuerOf(server, t.slug),
    audience: orders.identifier,
    typ: 'at+jwt',
  })
  return payload
}

/** The tenant's stored provider tokens (the exchanged tokens are JWTs, stored nowhere). */
async function tokenRows() {
  const { oidcModels } = await import('../../db/schema.ts')
  const { and, eq, ne } = await import('../../db/orm.ts')
  return server.deps.db
    .select()
    .from(oidcModels)
    .where(and(eq(oidcModels.tenantId, t.tenantId), ne(oidcModels.model, 'ReplayDetection')))
}

test('token exchange: the service’s own token of a Member → a JWT for the resource, within the role (RFC 8693 §2.2.1)', async () => {
  const { who, access } = await memberToken(t)
  const res = await exchange(exchanger.config, access)
  assert.equal(res.token_type.toLowerCase(), 'bearer')
  assert.equal((res as Record<string, unknown>).issued_token_type, ACCESS)
  assert.equal(res.scope, 'orders:read')
  assert.equal(res.expires_in, 300)
  const claims = await verified(res.access_token)
  assert.equal(claims.sub, who.user.id)
  assert.equal(claims.client_id, exchanger.clientId)
  assert.equal(claims.scope, 'orders:read')
  assert.equal(claims.act, undefined)
  // A scope beyond the Member's role: invalid_scope, nothing issued.
  const before = await tokenRows()
  const refused = await oauthError(exchange(exchanger.config, access, { scope: 'orders:admin' }))
  assert.deepEqual(refused, { error: 'invalid_scope', status: 400 })
  assert.deepEqual(await tokenRows(), before)
})

test('token exchange: with its own client-credentials token as actor_token the new token carries act {sub: client id}; another client’s is invalid_grant', async () => {
  const { access } = await memberToken(t)
  const own = await client.clientCredentialsGrant(exchanger.config)
  const res = await exchange(exchanger.config, access, {
    actor_token: own.access_token,
    actor_token_type: ACCESS,
  })
  assert.deepEqual((await verified(res.access_token)).act, { sub: exchanger.clientId })
  const other = await machine(t, {})
  const theirs = await client.clientCredentialsGrant(other.config)
  const refused = await oauthError(
    exchange(exchanger.config, access, {
      actor_token: theirs.access_token,
      actor_token_type: ACCESS,
    }),
  )
  assert.deepEqual(refused, { error: 'invalid_grant', status: 400 })
})

test('token exchange: a token the provider issued to a user (code flow) is a subject too; once revoked it is invalid_grant', async () => {
  const web = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Shop',
    type: 'web',
    redirectUris: [REDIRECT],
  })
  const who = await signup(server, t.slug)
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  await browser.post(`/t/${t.slug}/sign-in`, { email: who.email, password: who.password })
  const app = {
    clientId: web.application.clientId,
    clientSecret: web.clientSecret as string,
    redirectUri: REDIRECT,
  }
  const tokens = await grantThroughPages(server, t.slug, browser, app)
  const res = await exchange(exchanger.config, tokens.access_token)
  assert.equal((await verified(res.access_token)).sub, who.user.id)
  const webConfig = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  await client.tokenRevocation(webConfig, tokens.access_token)
  const refused = await oauthError(exchange(exchanger.config, tokens.access_token))
  assert.deepEqual(refused, { error: 'invalid_grant', status: 400 })
})

test('token exchange refusals: another tenant’s token, an ended session’s token, a client’s own token, garbage: invalid_grant, nothing issued', async () => {
  const other = await createTenant(server)
  const foreign = await memberToken(other)
  const ended = await memberToken(t)
  const out = await server.request('POST', `/v1/${t.slug}/auth/logout`, {
    refreshToken: ended.refresh,
  })
  assert.equal(out.status, 200)
  const own = await client.clientCredentialsGrant(exchanger.config)
  const otherMachine = await machine(other, {})
  const foreignProvider = await client.clientCredentialsGrant(otherMachine.config)
  for (const [why, token] of [
    ['another tenant’s service token', foreign.access],
    ['another tenant’s provider token', foreignProvider.access_token],
    ['a signed-out session’s token', ended.access],
    ['a client’s own token', own.access_token],
    ['garbage', 'not-a-token'],
  ]) {
    const before = await tokenRows()
    const refused = await oauthError(exchange(exchanger.config, token))
    assert.deepEqual(refused, { error: 'invalid_grant', status: 400 }, why)
    assert.deepEqual(await tokenRows(), before, why)
  }
})

test('token exchange: an application without tokenExchange is refused (oidc-provider: invalid_request, "requested grant type is not allowed for this client"); an unknown resource invalid_target; a wrong token type invalid_request', async () => {
  const { access } = await memberToken(t)
  const plain = await machine(t, {})
  assert.deepEqual(await oauthError(exchange(plain.config, access)), {
    error: 'invalid_request',
    status: 400,
  })
  assert.equal(
    (await oauthError(exchange(exchanger.config, access, { resource: 'https://nope.example/' })))
      .error,
    'invalid_target',
  )
  assert.equal(
    (
      await oauthError(
        exchange(exchanger.config, access, {
          subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        }),
      )
    ).error,
    'invalid_request',
  )
})

test('token exchange: a DPoP proof binds the exchanged token; a suspended user’s token is invalid_grant', async () => {
  const { who, access } = await memberToken(t)
  const key = await generateKeyPair('ES256', { extractable: true })
  const DPoP = client.getDPoPHandle(exchanger.config, key)
  const bound = await client.genericGrantRequest(
    exchanger.config,
    TOKEN_EXCHANGE,
    { subject_token: access, subject_token_type: ACCESS, resource: orders.identifier },
    { DPoP },
  )
  assert.equal(bound.token_type, 'dpop')
  const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey))
  assert.deepEqual((await verified(bound.access_token)).cnf, { jkt })
  // Suspended (the service's own token is still within its lifetime): no exchange.
  await setUser(server, t.tenantId, who.user.id, { status: 'Suspended' })
  const refused = await oauthError(exchange(exchanger.config, access))
  assert.deepEqual(refused, { error: 'invalid_grant', status: 400 })
})
