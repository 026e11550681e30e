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
