// A group's roles (CONTRACT §17): GET groups, PUT groups/{id}/roles, and every member holding
// those roles while a member: in the user record, /me's roles and permissions, the admin
// permission check (live, even with a token minted before) and the access token's roles
// claim; UserRolesChanged via "group" when a member's roles change. The refusals (unknown
// role, unknown group, escalation, another tenant) change nothing.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { decodeJwt } from 'jose'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import {
  GROUP_SCHEMA,
  PATCH_SCHEMA,
  type ScimTenant,
  scimTenant,
} from '../../../test/fixtures/scim.ts'
import { signup, startTestServer, type TestServer } from '../../../test/helpers.ts'

let server: TestServer
let t: ScimTenant
let other: ScimTenant
let admin: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await scimTenant(server)
  other = await scimTenant(server)
  admin = t.admin.accessToken
})

let n = 0
const fresh = (prefix: string) => `${prefix} ${++n} ${Math.random().toString(36).slice(2, 6)}`
const call = (method: string, path: string, body: unknown, token: string, slug = t.slug) =>
  server.request(method, `/v1/${slug}/${path}`, body, { token })

async function role(permissions: string[], name = fresh('Role')) {
  const res = await call('POST', 'roles', { name, permissions }, admin)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.role as { id: string; name: string }
}

async function group(tenant: ScimTenant, members: string[] = [], displayName = fresh('Group')) {
  const res = await tenant.scim('POST', '/Groups', {
    schemas: [GROUP_SCHEMA],
    displayName,
    members: members.map((value) => ({ value })),
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id as string
}

const members = (tenant: ScimTenant, id: string, op: string, userId: string, key?: string) =>
  tenant.scim(
    'PATCH',
    `/Groups/${id}`,
    {
      schemas: [PATCH_SCHEMA],
      Operations:
        op === 'add'
          ? [{ op: 'add', path: 'members', value: [{ value: userId }] }]
          : [{ op: 'remove', path: `members[value eq "${userId}"]` }],
    },
    key ? { token: key } : {},
  )

test("a group's roles are held by its members: records, /me, the permission check and the token's roles claim", async () => {
  const reader = await role(['audit:read'])
  const user = await signup(server, t.slug)
  const token = user.accessToken as string
  const id = await group(t, [user.user.id])
  expectError(await call('GET', 'audit?limit=1', undefined, token), 403, 'admin_required')

  const mark = await auditMark(server, t.tenantId)
  const set = await call('PUT', `groups/${id}/roles`, { roles: [reader.name.toUpperCase()] }, admin)
  assert.equal(set.status, 200, JSON.stringify(set.body))
  assert.deepEqual(set.body.group.roles, [reader.name])
  assert.equal(set.body.group.memberCount, 1)
  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => [e.action, e.userId ?? null, e.metadata]),
    [
      [
        'GroupUpdated',
        null,
        {
          via: 'admin',
          groupId: id,
          displayName: set.body.group.displayName,
          fields: ['roles'],
          rolesAdded: [reader.name],
          rolesRemoved: [],
        },
      ],
      ['UserRolesChanged', user.user.id, { added: [reader.name], removed: [], via: 'group' }],
    ],
  )

  // The record, /me, and the admin check (with the token minted before): all at once.
  const users = await call('GET', 'users?limit=200', undefined, admin)
  const record = users.body.items.find((u: { id: string }) => u.id === user.user.id)
  assert.deepEqual(record.roles, [reader.name])
  const me = await call('GET', 'me', undefined, token)
  assert.deepEqual(me.body.roles, [reader.name])
  assert.deepEqual(me.body.permissions, ['audit:read'])
  assert.equal((await call('GET', 'audit?limit=1', undefined, token)).status, 200)
  // The access token's roles claim, from the next sign-in or refresh.
  const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
    refreshToken: user.refreshToken,
  })
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body))
  assert.deepEqual(decodeJwt(refreshed.body.accessToken).roles, [reader.name])

  // Listed with its roles and members.
  const list = await call('GET', 'groups?limit=200', undefined, admin)
  assert.equal(list.status, 200)
  const listed = list.body.items.find((g: { id: string }) => g.id === id)
  assert.deepEqual([listed.roles, listed.memberCount], [[reader.name], 1])

  // Leaving the group takes the role away (and the permission, live).
  const left = await auditMark(server, t.tenantId)
  assert.equal((await members(t, id, 'remove', user.user.id)).status, 200)
  const changed = (await auditSince(server, t.tenantId, left)).filter(
    (e) => e.action === 'UserRolesChanged',
  )
  assert.deepEqual(
    changed.map((e) => e.metadata),
    [{ added: [], removed: [reader.name], via: 'group' }],
  )
  expectError(await call('GET', 'audit?limit=1', undefined, token), 403, 'admin_required')
  assert.deepEqual((await call('GET', 'me', undefined, token)).body.roles, [])

  // A role held directly too is not lost with the group, and its gain records nothing.
  assert.equal((await members(t, id, 'add', user.user.id)).status, 200)
  assert.equal(
    (await call('PUT', `users/${user.user.id}/roles`, { roles: [reader.name] }, admin)).status,
    200,
  )
  const both = await auditMark(server, t.tenantId)
  assert.equal((await members(t, id, 'remove', user.user.id)).status, 200)
  assert.ok(
    !(await auditSince(server, t.tenantId, both)).some((e) => e.action === 'UserRolesChanged'),
  )
  assert.deepEqual((await call('GET', 'me', undefined, token)).body.roles, [reader.name])
})

test('deleting a role takes it from every group; deleting a group takes its roles from its members', async () => {
  const a = await role(['audit:read'])
  const b = await role(['users:read'])
  const user = await signup(server, t.slug)
  const id = await group(t, [user.user.id])
  assert.equal(
    (await call('PUT', `groups/${id}/roles`, { roles: [a.name, b.name] }, admin)).status,
    200,
  )
  assert.equal((await call('DELETE', `roles/${a.id}`, undefined, admin)).status, 200)
  const list = await call('GET', 'groups?limit=200', undefined, admin)
  assert.deepEqual(list.body.items.find((g: { id: string }) => g.id === id).roles, [b.name])

  const mark = await auditMark(server, t.tenantId)
  assert.equal((await t.scim('DELETE', `/Groups/${id}`)).status, 204)
  const changed = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'UserRolesChanged',
  )
  assert.deepEqual(
    changed.map((e) => [e.userId, e.metadata]),
    [[user.user.id, { added: [], removed: [b.name], via: 'group' }]],
  )
  assert.deepEqual((await call('GET', 'me', undefined, user.accessToken)).body.roles, [])
})

test("PUT groups/{id}/roles refuses an unknown role, an unknown group, an escalation and another tenant's group, changing nothing", async () => {
  const owner = await role(['tenant:write'])
  const id = await group(t)
  // A user holding roles:write (and users:read) but not tenant:write.
  const manager = await role(['roles:write', 'users:read'])
  const u = await signup(server, t.slug)
  assert.equal(
    (await call('PUT', `users/${u.user.id}/roles`, { roles: [manager.name] }, admin)).status,
    200,
  )
  const managerToken = u.accessToken as string
  const member = await signup(server, other.slug)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    expectValidation(
      await call('PUT', `groups/${id}/roles`, { roles: [owner.name, 'No Such Role'] }, admin),
      'body.roles.1',
    )
    expectError(
      await call('PUT', 'groups/0190a0b0-0000-7000-8000-000000000000/roles', { roles: [] }, admin),
      404,
      'not_found',
    )
    expectValidation(await call('PUT', 'groups/nope/roles', { roles: [] }, admin))
    expectValidation(await call('PUT', `groups/${id}/roles`, { roles: 'x' }, admin))
    // No escalation: the manager cannot give a group tenant:write.
    expectError(
      await call('PUT', `groups/${id}/roles`, { roles: [owner.name] }, managerToken),
      403,
      'permission_required',
    )
    // A member without roles:write.
    expectError(
      await call('PUT', `groups/${id}/roles`, { roles: [] }, member.accessToken, other.slug),
      403,
      'admin_required',
    )
    // Another tenant's admin: the group is not there.
    expectError(
      await call('PUT', `groups/${id}/roles`, { roles: [] }, other.admin.accessToken, other.slug),
      404,
      'not_found',
    )
    const theirs = await call(
      'GET',
      'groups?limit=200',
      undefined,
      other.admin.accessToken,
      other.slug,
    )
    assert.ok(!theirs.body.items.some((g: { id: string }) => g.id === id))
  })
  // The manager may give a group a role it holds itself.
  const mine = await call('PUT', `groups/${id}/roles`, { roles: [manager.name] }, managerToken)
  assert.equal(mine.status, 200, JSON.stringify(mine.body))
})

test('no escalation through membership: a SCIM key without tenant:write cannot add a user to a group holding it', async () => {
  const owner = await role(['tenant:write'])
  const target = await signup(server, t.slug)
  const id = await group(t)
  assert.equal(
    (await call('PUT', `groups/${id}/roles`, { roles: [owner.name] }, admin)).status,
    200,
  )
  const { plaintext: weak } = await createKey(server, t.slug, admin, {
    name: 'directory',
    environment: 'live',
    permissions: ['users:write', 'users:read'],
  })
  await unchanged(server, t.tenantId, async () => {
    const res = await members(t, id, 'add', target.user.id, weak)
    assert.equal(res.status, 403, JSON.stringify(res.body))
    assert.equal(res.body.status, '403')
  })
  // A key holding every permission may.
  assert.equal((await members(t, id, 'add', target.user.id)).status, 200)
  assert.deepEqual((await call('GET', 'me', undefined, target.accessToken)).body.roles, [
    owner.name,
  ])
})
