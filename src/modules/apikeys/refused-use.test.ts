// A valid API key sent to a route that refuses keys (api-keys, IdP credentials: 403
// api_key_not_allowed, CONTRACT §4) is refused without being counted as a use: its
// lastUsedAt does not move. A use on a route that takes keys does move it.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { expectError } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import { createTenant, startTestServer, type TestServer } from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { apiKeys } from '../../db/schema.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx)
  await server.deps.apiKeyUsage.stop() // flushed by hand below
})

test('a refused key is not used; an accepted one is', async () => {
  const t = await createTenant(server)
  const { plaintext, apiKey } = await createKey(server, t.slug, t.admin.accessToken)
  const lastUsed = async () => {
    await server.deps.apiKeyUsage.flush()
    const [row] = await server.deps.db
      .select({ at: apiKeys.lastUsedAt })
      .from(apiKeys)
      .where(and(eq(apiKeys.tenantId, t.tenantId), eq(apiKeys.id, apiKey.id)))
    return row.at
  }
  for (const [method, path] of [
    ['GET', 'api-keys'],
    ['PUT', 'oauth/idp/credentials'],
  ]) {
    const res = await server.request(method, `/v1/${t.slug}/${path}`, undefined, {
      token: plaintext,
    })
    expectError(res, 403, 'api_key_not_allowed')
  }
  assert.equal(await lastUsed(), null, 'a refused key was recorded as used')
  const ok = await server.request('GET', `/v1/${t.slug}/audit?limit=1`, undefined, {
    token: plaintext,
  })
  assert.equal(ok.status, 200)
  assert.notEqual(await lastUsed(), null)
})
