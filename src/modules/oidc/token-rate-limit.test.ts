// RATE_LIMIT_OIDC_TOKEN (CONTRACT §11, Limits): the token endpoint counts per (tenant,
// client); past the budget, 429 with Retry-After and nothing issued; another client of
// the tenant, or the same client id elsewhere, keeps its own budget. Requests whose client
// authentication fails count per IP (RATE_LIMIT_TOKEN_ENDPOINTS), and so do those of an
// authenticated client whose grant is refused (RATE_LIMIT_OIDC_INVALID_GRANTS), never the
// client's budget.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as client from 'openid-client'
import { expectError } from '../../../test/envelope.ts'
import { createApplication, grantThroughPages, oidcClient } from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startTestServer,
} from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'
import { and, eq, isNull } from '../../db/orm.ts'
import { oidcModels } from '../../db/schema.ts'

const REDIRECT = 'https://app.example.com/callback'

test('the token endpoint budget is per (tenant, client): past it 429 with Retry-After', async (t) => {
  const server = await startTestServer(t, {
    limits: { ...GENEROUS_LIMITS, oidcToken: { points: 2, seconds: 60 } },
  })
  const tenant = await createTenant(server)
  const app = (type: string) =>
    createApplication(server, tenant.slug, tenant.admin.accessToken, { name: type, type })
  const [one, two] = [await app('machine'), await app('machine')]
  const token = (made: typeof one) =>
    server.request('POST', `/oidc/${tenant.slug}/token`, undefined, {
      raw: 'grant_type=client_credentials',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${made.application.clientId}:${made.clientSecret}`).toString('base64')}`,
      },
    })
  assert.equal((await token(one)).status, 200)
  assert.equal((await token(one)).status, 200)
  const refused = await token(one)
  expectError(refused, 429, 'rate_limited')
  assert.ok(Number(refused.headers.get('retry-after')) > 0)
  // The other client of the tenant has its own budget.
  assert.equal((await token(two)).status, 200)
})

test('requests whose client authentication fails never spend the client’s budget; they count per IP (RATE_LIMIT_TOKEN_ENDPOINTS)', async (t) => {
  const server = await startTestServer(t, {
    limits: {
      ...GENEROUS_LIMITS,
      oidcToken: { points: 2, seconds: 60 },
      tokenEndpoints: { points: 4, seconds: 60 },
    },
  })
  const tenant = await createTenant(server)
  const made = await createApplication(server, tenant.slug, tenant.admin.accessToken, {
    name: 'machine',
    type: 'machine',
  })
  const { clientId } = made.application
  const send = (
    ip: string,
    headers: Record<string, string>,
    raw = 'grant_type=client_credentials',
  ) =>
    server.request('POST', `/oidc/${tenant.slug}/token`, undefined, {
      ip,
      raw,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    })
  const basic = (secret: string) => ({
    authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
  })
  // Someone without the secret names the client: a wrong secret, or the id alone.
  const attacker = randomIp()
  const failures = [
    await send(attacker, basic('not-the-secret')),
    await send(attacker, {}, `grant_type=client_credentials&client_id=${clientId}`),
    await send(attacker, basic('still-not-it')),
    await send(attacker, {}, `grant_type=client_credentials&client_id=${clientId}`),
  ]
  for (const res of failures)
    assert.equal(res.body.error, 'invalid_client', JSON.stringify(res.body))
  // Past its per-IP budget of failed authentications, the attacker is refused.
  expectError(await send(attacker, basic('again')), 429, 'rate_limited')

  // The client's own budget is whole: two tokens, then 429.
  const client = randomIp()
  assert.equal((await send(client, basic(String(made.clientSecret)))).status, 200)
  assert.equal((await send(client, basic(String(made.clientSecret)))).status, 200)
  expectError(await send(client, basic(String(made.clientSecret))), 429, 'rate_limited')
})

test('a public client’s budget is not spendable by junk grants: invalid grants count per IP in RATE_LIMIT_OIDC_INVALID_GRANTS, and a real user’s refresh still works', async (t) => {
  const server = await startTestServer(t, {
    limits: {
      ...GENEROUS_LIMITS,
      oidcToken: { points: 5, seconds: 60 },
      oidcInvalidGrants: { points: 3, seconds: 60 },
    },
  })
  const tenant = await createTenant(server)
  const made = await createApplication(server, tenant.slug, tenant.admin.accessToken, {
    name: 'Browser app',
    type: 'spa',
    redirectUris: [REDIRECT],
  })
  const { clientId } = made.application
  const who = await signup(server, tenant.slug)
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${tenant.slug}/sign-in`)
  await browser.post(`/t/${tenant.slug}/sign-in`, { email: who.email, password: who.password })
  // The code's exchange takes one point of the client's five.
  const tokens = await grantThroughPages(server, tenant.slug, browser, {
    clientId,
    redirectUri: REDIRECT,
  })
  assert.ok(tokens.refresh_token)

  // Anyone who knows the public client's id sends junk refresh tokens (the id is its
  // whole authentication): past three, that address is refused, and none of it is the
  // client's budget.
  const attacker = randomIp()
  const junk = () =>
    server.request('POST', `/oidc/${tenant.slug}/token`, undefined, {
      ip: attacker,
      raw: `grant_type=refresh_token&refresh_token=junk-${Math.random()}&client_id=${clientId}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
  for (let i = 0; i < 3; i++) {
    const res = await junk()
    assert.equal(res.status, 400, JSON.stringify(res.body))
    assert.equal(res.body.error, 'invalid_grant')
  }
  for (let i = 0; i < 7; i++) expectError(await junk(), 429, 'rate_limited')

  // The user's refreshes, from the user's address (one of its own: 127.0.0.1's buckets are
  // shared in Redis with every other test file): the client's four points left are whole.
  const config = await oidcClient(server, tenant.slug, clientId, undefined, randomIp())
  let refresh = tokens.refresh_token
  for (let i = 0; i < 4; i++) {
    const next = await client.refreshTokenGrant(config, refresh)
    assert.ok(next.access_token)
    refresh = String(next.refresh_token)
  }
  // Then the client's own budget is spent: 429, and the refresh token is not used up.
  const refused = await server.request('POST', `/oidc/${tenant.slug}/token`, undefined, {
    raw: `grant_type=refresh_token&refresh_token=${refresh}&client_id=${clientId}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  expectError(refused, 429, 'rate_limited')
  const live = await server.deps.db
    .select()
    .from(oidcModels)
    .where(
      and(
        eq(oidcModels.tenantId, tenant.tenantId),
        eq(oidcModels.model, 'RefreshToken'),
        isNull(oidcModels.consumedAt),
      ),
    )
  assert.equal(live.length, 1)
})
