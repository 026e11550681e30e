// Least-privilege API keys (CONTRACT §17): `permissions` on creation (default: the
// creator's own), shown in the record and the list, checked on every request with the key
// (kept with it, so no read of their own), and never more than the creator holds.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditRows, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey, insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { apiKeys } from '../../db/schema.ts'
import { PERMISSION_NAMES } from '../roles/permissions.ts'

let server: TestServer
let t: TenantFixture
let admin: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
})

const EVERY = [...PERMISSION_NAMES].sort()
const call = (method: string, path: string, body: unknown, token: string) =>
  server.request(method, `/v1/${t.slug}/${path}`, body, { token })

let n = 0
/** A signed-up Member holding one custom role with `permissions`. */
async function holder(permissions: string[]) {
  const role = await call('POST', 'roles', { name: `Keys ${++n}`, permissions }, admin)
  assert.equal(role.status, 200, JSON.stringify(role.body))
  const u = await signup(server, t.slug)
  const put = await call('PUT', `users/${u.user.id}/roles`, { roles: [role.body.role.name] }, admin)
  assert.equal(put.status, 200, JSON.stringify(put.body))
  return u.accessToken as string
}

async function storedPermissions(id: string) {
  const [row] = await server.deps.db
    .select({ permissions: apiKeys.permissions })
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, t.tenantId), eq(apiKeys.id, id)))
  return row.permissions
}

describe('API key permissions', () => {
  test("an Admin's key holds every permission by default; stored, shown, listed, audited", async () => {
    const { apiKey } = await createKey(server, t.slug, admin)
    assert.deepEqual(apiKey.permissions, EVERY)
    assert.deepEqual(await storedPermissions(apiKey.id), EVERY)
    const list = await call('GET', 'api-keys', undefined, admin)
    const listed = list.body.items.find((k: { id: string }) => k.id === apiKey.id)
    assert.deepEqual(listed.permissions, EVERY)
    const events = await auditRows(server, t.tenantId, 'ApiKeyCreated')
    const event = events.find((e) => e.metadata.apiKeyId === apiKey.id)
    assert.deepEqual(event?.metadata.permissions, EVERY)
  })

  test('a key made before keys had permissions (null) holds every one, as it did', async () => {
    const plaintext = await insertApiKey(server, t.tenantId)
    const res = await call('GET', 'audit', undefined, plaintext)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const list = await call('GET', 'api-keys', undefined, admin)
    const legacy = list.body.items.find((k: { name: string }) => k.name === 'test key')
    assert.deepEqual(legacy.permissions, EVERY)
  })

  test('a key asked for users:read: sorted, deduplicated; may read users, refused the rest', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin, {
      name: 'reader',
      environment: 'live',
      permissions: ['users:read', 'users:read'],
    })
    assert.deepEqual(apiKey.permissions, ['users:read'])
    assert.deepEqual(await storedPermissions(apiKey.id), ['users:read'])
    assert.equal((await call('GET', 'users', undefined, plaintext)).status, 200)
    await unchanged(server, t.tenantId, async () => {
      const audit = await call('GET', 'audit', undefined, plaintext)
      expectError(audit, 403, 'permission_required')
      assert.equal(audit.body.details.permission, 'audit:read')
      const invite = await call(
        'POST',
        'invites',
        { email: 'nobody@example.com', role: 'Member' },
        plaintext,
      )
      expectError(invite, 403, 'permission_required')
      assert.equal(invite.body.details.permission, 'invites:write')
    })
  })

  test('a request refused for a missing permission is no use of the key', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin, {
      name: 'unused',
      environment: 'live',
      permissions: ['users:read'],
    })
    expectError(await call('GET', 'audit', undefined, plaintext), 403, 'permission_required')
    const list = await call('GET', 'api-keys', undefined, admin)
    const listed = list.body.items.find((k: { id: string }) => k.id === apiKey.id)
    assert.equal(listed.lastUsedAt, null)
    assert.equal((await call('GET', 'users', undefined, plaintext)).status, 200)
    const after = await call('GET', 'api-keys', undefined, admin)
    const used = after.body.items.find((k: { id: string }) => k.id === apiKey.id)
    assert.notEqual(used.lastUsedAt, null)
  })

  test('a key holding users:write may read users too (a :write grants its :read)', async () => {
    const { plaintext } = await createKey(server, t.slug, admin, {
      name: 'writer',
      environment: 'live',
      permissions: ['users:write'],
    })
    assert.equal((await call('GET', 'users', undefined, plaintext)).status, 200)
    expectError(await call('GET', 'tenant', undefined, plaintext), 403, 'permission_required')
  })

  test("a non-Admin creator's key holds the creator's permissions by default", async () => {
    const creator = await holder(['users:read', 'apikeys:write'])
    const { plaintext, apiKey } = await createKey(server, t.slug, creator)
    assert.deepEqual(apiKey.permissions, ['apikeys:write', 'users:read'])
    assert.equal((await call('GET', 'users', undefined, plaintext)).status, 200)
    expectError(await call('GET', 'audit', undefined, plaintext), 403, 'permission_required')
    // Still an Admin's user token only: a key never lists or makes keys.
    expectError(await call('GET', 'api-keys', undefined, plaintext), 403, 'api_key_not_allowed')
  })

  test('asking for more than the creator holds: 403 permission_required, nothing created', async () => {
    const creator = await holder(['users:read', 'apikeys:write'])
    await unchanged(server, t.tenantId, async () => {
      const res = await call(
        'POST',
        'api-keys',
        { name: 'greedy', environment: 'live', permissions: ['users:read', 'users:write'] },
        creator,
      )
      expectError(res, 403, 'permission_required')
      assert.equal(res.body.details.permission, 'users:write')
    })
  })

  const bad: [string, unknown, string][] = [
    ['an unknown permission', ['users:read', 'users:fly'], 'body.permissions.1'],
    ['an empty list', [], 'body.permissions'],
    ['a string', 'users:read', 'body.permissions'],
    ['a number in the list', [5], 'body.permissions.0'],
    ['an empty name', [''], 'body.permissions.0'],
  ]
  for (const [what, permissions, issue] of bad) {
    test(`${what} as permissions: 400 validation, nothing created`, async () => {
      await unchanged(server, t.tenantId, async () => {
        const res = await call(
          'POST',
          'api-keys',
          { name: 'k', environment: 'live', permissions },
          admin,
        )
        expectValidation(res, issue)
      })
    })
  }

  test('a kept key answers with its own permissions on every request', async () => {
    const { plaintext } = await createKey(server, t.slug, admin, {
      name: 'kept',
      environment: 'live',
      permissions: ['audit:read'],
    })
    for (let i = 0; i < 3; i++) {
      assert.equal((await call('GET', 'audit', undefined, plaintext)).status, 200)
      expectError(await call('GET', 'users', undefined, plaintext), 403, 'permission_required')
    }
  })
})
