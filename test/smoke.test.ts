import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { createTenant, startTestServer, type TestServer } from './helpers.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

test('a new tenant admin can read /me', async () => {
  const t = await createTenant(server)
  const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
    token: t.admin.accessToken,
  })
  assert.equal(me.status, 200)
  assert.equal(me.body.email, t.adminEmail)
})
