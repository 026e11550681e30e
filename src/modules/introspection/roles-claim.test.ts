// `roles` (CONTRACT §17): the service's own access tokens carry the user's custom role names
// when it holds any (no claim when none), from sign-in and refresh; introspection answers
// the user's custom roles now (absent when none), so one taken away shows at once.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { decodePart } from '../../../test/fixtures/signing-keys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
let key: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  key = await insertApiKey(server, t.tenantId)
})

const call = (method: string, path: string, body: unknown, token = t.admin.accessToken) =>
  server.request(method, `/v1/${t.slug}/${path}`, body, { token })
const introspect = async (token: string) => {
  const res = await call('POST', 'oauth/introspect', { token }, key)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

test('no custom roles: no roles claim, no roles in introspection', async () => {
  const u = await signup(server, t.slug)
  assert.equal('roles' in decodePart(u.accessToken, 1), false)
  const answer = await introspect(u.accessToken)
  assert.equal(answer.active, true)
  assert.equal('roles' in answer, false)
})

test('custom roles: in the token from refresh on, and in introspection live', async () => {
  const names = ['Zeta readers', 'alpha auditors']
  for (const name of names) {
    assert.equal((await call('POST', 'roles', { name, permissions: [] })).status, 200)
  }
  const u = await signup(server, t.slug)
  const put = await call('PUT', `users/${u.user.id}/roles`, { roles: names })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  const sorted = ['alpha auditors', 'Zeta readers']
  // The token minted before the grant has no claim, but introspection reads roles now.
  assert.equal('roles' in decodePart(u.accessToken, 1), false)
  assert.deepEqual((await introspect(u.accessToken)).roles, sorted)

  const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
    refreshToken: u.refreshToken,
  })
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body))
  assert.deepEqual(decodePart(refreshed.body.accessToken, 1).roles, sorted)
  assert.deepEqual(refreshed.body.user.roles, sorted)

  const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: u.email,
    password: u.password,
  })
  assert.equal(login.status, 200, JSON.stringify(login.body))
  assert.deepEqual(decodePart(login.body.accessToken, 1).roles, sorted)

  // Taken away: introspection says so at once, though the token still carries the claim.
  assert.equal((await call('PUT', `users/${u.user.id}/roles`, { roles: [] })).status, 200)
  const after = await introspect(refreshed.body.accessToken)
  assert.equal(after.active, true)
  assert.equal('roles' in after, false)
})
