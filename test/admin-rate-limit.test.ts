// The 429 that SPEC lists on every administration route: each admin user and each API key
// of a tenant has its own budget (RATE_LIMIT_ADMIN_REQUESTS).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { createTenant, GENEROUS_LIMITS, startTestServer, type TestServer } from './helpers.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t, {
    limits: { ...GENEROUS_LIMITS, adminRequests: { points: 3, seconds: 60 } },
  })
})

test('rule: an admin gets 429 with Retry-After past its budget; a key has its own', async () => {
  const t = await createTenant(server)
  const token = t.admin.accessToken
  const created = await server.request(
    'POST',
    `/v1/${t.slug}/api-keys`,
    { name: 'ci', environment: 'test' },
    { token },
  )
  assert.equal(created.status, 200)
  for (let i = 0; i < 2; i++) {
    assert.equal(
      (await server.request('GET', `/v1/${t.slug}/tenant`, undefined, { token })).status,
      200,
    )
  }
  const held = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, { token })
  assert.equal(held.status, 429)
  assert.equal(held.body.code, 'TOO_MANY_REQUESTS')
  assert.ok(Number(held.headers.get('retry-after')) > 0)

  const key = created.body.plaintext
  const asKey = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, { token: key })
  assert.equal(asKey.status, 200)
  // Routes for any signed-in user are not administration routes.
  assert.equal((await server.request('GET', `/v1/${t.slug}/me`, undefined, { token })).status, 200)
})

test('another tenant is not affected', async () => {
  const other = await createTenant(server)
  const res = await server.request('GET', `/v1/${other.slug}/tenant`, undefined, {
    token: other.admin.accessToken,
  })
  assert.equal(res.status, 200)
})
