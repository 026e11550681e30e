// GET permissions and the effective permissions of GET me (CONTRACT §17): the catalogue
// for any signed-in user of the tenant or an API key; /me's `permissions` are the base
// role's (every one for an Admin, none for a Member), read live from the user's row.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { setUser } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

/** The catalogue of CONTRACT §17, written out: the service may not drift from it. */
const CATALOGUE = [
  'tenant:read',
  'tenant:write',
  'users:read',
  'users:write',
  'roles:write',
  'invites:write',
  'apikeys:write',
  'audit:read',
  'applications:write',
  'connections:write',
  'webhooks:write',
  'hooks:write',
  'organizations:write',
  'users:impersonate',
]

const permissions = (token?: string, slug = t.slug) =>
  server.request('GET', `/v1/${slug}/permissions`, undefined, { token })

describe('GET permissions', () => {
  test('a Member, an Admin and an API key read the same catalogue', async () => {
    const member = await signup(server, t.slug)
    const key = await insertApiKey(server, t.tenantId)
    for (const token of [member.accessToken, t.admin.accessToken, key]) {
      const res = await permissions(token)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.deepEqual(Object.keys(res.body), ['items'])
      assert.deepEqual(
        res.body.items.map((p: { name: string }) => p.name),
        CATALOGUE,
      )
      for (const item of res.body.items) {
        assert.deepEqual(Object.keys(item).sort(), ['description', 'name'])
        assert.equal(typeof item.description, 'string')
        assert.ok(item.description.length > 0, item.name)
      }
    }
  })

  test('no token, a bad token, a revoked key or another tenant’s credentials: 401', async () => {
    expectError(await permissions(), 401, 'token_missing')
    expectError(await permissions('not-a-jwt'), 401, 'token_invalid')
    const revoked = await insertApiKey(server, t.tenantId, { revokedAt: new Date() })
    expectError(await permissions(revoked), 401, 'invalid_api_key')
    const other = await createTenant(server)
    expectError(await permissions(other.admin.accessToken), 401, 'token_invalid')
    expectError(
      await permissions(await insertApiKey(server, other.tenantId)),
      401,
      'invalid_api_key',
    )
  })

  test('an unknown tenant: 404 before anything else', async () => {
    expectError(await permissions(undefined, 'no-such-tenant-here'), 404, 'tenant_not_found')
  })
})

describe('GET me: permissions and roles', () => {
  const me = (token: string) => server.request('GET', `/v1/${t.slug}/me`, undefined, { token })

  test('an Admin holds every permission, sorted; a Member none; neither a custom role', async () => {
    const admin = await me(t.admin.accessToken)
    assert.equal(admin.status, 200)
    assert.deepEqual(admin.body.permissions, [...CATALOGUE].sort())
    assert.deepEqual(admin.body.roles, [])
    const member = await signup(server, t.slug)
    const res = await me(member.accessToken)
    assert.deepEqual(res.body.permissions, [])
    assert.deepEqual(res.body.roles, [])
  })

  test('read live: a promotion and a demotion show at once, with the same token', async () => {
    const member = await signup(server, t.slug)
    await setUser(server, t.tenantId, member.user.id, { role: 'Admin' })
    assert.deepEqual((await me(member.accessToken)).body.permissions, [...CATALOGUE].sort())
    const users = await server.request('GET', `/v1/${t.slug}/users`, undefined, {
      token: member.accessToken,
    })
    assert.equal(users.status, 200)
    await setUser(server, t.tenantId, member.user.id, { role: 'Member' })
    assert.deepEqual((await me(member.accessToken)).body.permissions, [])
    expectError(
      await server.request('GET', `/v1/${t.slug}/users`, undefined, { token: member.accessToken }),
      403,
      'admin_required',
    )
  })

  test('user records carry roles: the token envelope and the users list', async () => {
    const member = await signup(server, t.slug)
    assert.deepEqual(member.user.roles, [])
    const list = await server.request('GET', `/v1/${t.slug}/users`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(list.status, 200)
    for (const user of list.body.items) assert.deepEqual(user.roles, [])
  })
})
