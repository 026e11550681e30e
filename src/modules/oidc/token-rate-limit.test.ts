// RATE_LIMIT_OIDC_TOKEN (CONTRACT §11, Limits): the token endpoint counts per (tenant,
// client); past the budget, 429 with Retry-After and nothing issued; another client of
// the tenant, or the same client id elsewhere, keeps its own budget.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { expectError } from '../../../test/envelope.ts'
import { createApplication } from '../../../test/fixtures/oidc.ts'
import { createTenant, GENEROUS_LIMITS, startTestServer } from '../../../test/helpers.ts'

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
  const attacker = '198.51.100.7'
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
  const client = '192.0.2.44'
  assert.equal((await send(client, basic(String(made.clientSecret)))).status, 200)
  assert.equal((await send(client, basic(String(made.clientSecret)))).status, 200)
  expectError(await send(client, basic(String(made.clientSecret))), 429, 'rate_limited')
})
