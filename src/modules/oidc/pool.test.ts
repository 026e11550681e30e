// The bounded Provider pool (STYLE, "one Provider per tenant in a bounded pool"): however
// many tenants are touched, at most `max` Providers are kept; an evicted tenant's
// Provider is built again on its next request (its state is in PostgreSQL).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { startTestServer, type TestServer } from '../../../test/helpers.ts'
import { signingJwks } from './keys.ts'
import { ProviderPool } from './pool.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx)
})

test('the pool keeps at most `max` Providers, the most recently used, and rebuilds an evicted one', async () => {
  const {
    config,
    db,
    cipher,
    clock,
    audit,
    tokens,
    revocations,
    providerPages: pages,
  } = server.deps
  const pool = new ProviderPool(
    {
      config,
      db,
      cipher,
      clock,
      audit,
      tokens,
      revocations,
      jwks: signingJwks(config.oidcSigningKeys),
      pages,
      hookClaims: async () => ({}),
    },
    3,
  )
  const tenants = Array.from({ length: 6 }, (_, i) => ({
    id: crypto.randomUUID(),
    slug: `pool-tenant-${i}`,
  }))
  const handlers = tenants.map((t) => pool.handler(t))
  assert.equal(pool.size, 3)
  // The three most recent are kept (the same handler answers again)…
  assert.equal(pool.handler(tenants[5]), handlers[5])
  assert.equal(pool.size, 3)
  // …the oldest was evicted: a new Provider is built for it, and another one goes.
  assert.notEqual(pool.handler(tenants[0]), handlers[0])
  assert.equal(pool.size, 3)
  assert.equal(pool.handler(tenants[0]), pool.handler(tenants[0]))
})
