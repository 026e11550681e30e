// Custom roles and their assignment (CONTRACT §17): the roles API with its built-ins, the
// validations, PUT users/{id}/roles, effective permissions on the admin routes, and the
// no-escalation rule. Every refusal checks that nothing changed.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { actionsSince, auditMark, auditSince, setUser, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
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
let admin: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
})

let n = 0
const fresh = (prefix = 'Role') => `${prefix} ${++n} ${Math.random().toString(36).slice(2, 6)}`

const call = (method: string, path: string, body: unknown, token: string, slug = t.slug) =>
  server.request(method, `/v1/${slug}/${path}`, body, { token })
const create = (body: unknown, token = admin, slug = t.slug) =>
  call('POST', 'roles', body, token, slug)
const assign = (userId: string, roles: string[], token = admin, slug = t.slug) =>
  call('PUT', `users/${userId}/roles`, { roles }, token, slug)
const me = (token: string) => call('GET', 'me', undefined, token)

async function role(permissions: string[], name = fresh()) {
  const res = await create({ name, permissions })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.role
}

/** A signed-up Member holding custom roles with `permissions`. */
async function holder(permissions: string[]) {
  const r = await role(permissions)
  const u = await signup(server, t.slug)
  assert.equal((await assign(u.user.id, [r.name])).status, 200)
  return { token: u.accessToken as string, id: u.user.id as string, role: r }
}

describe('roles', () => {
  test('GET roles lists the built-ins, immutable, with their permissions', async () => {
    const res = await call('GET', 'roles', undefined, admin)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.nextCursor, null)
    const [first, second] = res.body.items
    assert.equal(first.name, 'Admin')
    assert.equal(first.builtIn, true)
    assert.equal(first.permissions.length, 14)
    assert.equal(second.name, 'Member')
    assert.deepEqual(second.permissions, [])
    assert.equal((await call('GET', 'roles/Admin', undefined, admin)).body.role.builtIn, true)
    for (const id of ['Admin', 'Member']) {
      await unchanged(server, t.tenantId, async () => {
        expectError(await call('PATCH', `roles/${id}`, { name: 'X' }, admin), 403, 'builtin_role')
        expectError(await call('DELETE', `roles/${id}`, undefined, admin), 403, 'builtin_role')
      })
    }
  })

  test('create, read, change, delete: each audited; names and permissions normalised', async () => {
    const mark = await auditMark(server, t.tenantId)
    const name = fresh('Support')
    const res = await create({
      name,
      description: 'Helps users',
      permissions: ['users:write', 'users:read', 'users:read'],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const created = res.body.role
    assert.deepEqual(Object.keys(created).sort(), [
      'builtIn',
      'createdAt',
      'description',
      'id',
      'kind',
      'name',
      'permissions',
      'resourceScopes',
      'updatedAt',
    ])
    assert.deepEqual(created.permissions, ['users:read', 'users:write'])
    assert.equal(created.kind, 'tenant')
    assert.equal(created.builtIn, false)
    assert.deepEqual(
      (await call('GET', `roles/${created.id}`, undefined, admin)).body.role,
      created,
    )
    const list = await call('GET', 'roles', undefined, admin)
    assert.ok(list.body.items.some((r: { id: string }) => r.id === created.id))
    const patched = await call(
      'PATCH',
      `roles/${created.id}`,
      { permissions: ['audit:read'] },
      admin,
    )
    assert.equal(patched.status, 200)
    assert.deepEqual(patched.body.role.permissions, ['audit:read'])
    assert.equal(patched.body.role.name, name)
    assert.deepEqual((await call('DELETE', `roles/${created.id}`, undefined, admin)).body, {
      ok: true,
    })
    expectError(await call('GET', `roles/${created.id}`, undefined, admin), 404, 'not_found')
    assert.deepEqual(await actionsSince(server, t.tenantId, mark), [
      'RoleCreated',
      'RoleDeleted',
      'RoleUpdated',
    ])
    const [createdEvent] = await auditSince(server, t.tenantId, mark)
    assert.equal((createdEvent.metadata as { name: string }).name, name)
  })

  test('bad input is 400 validation naming it, and changes nothing', async () => {
    const taken = await role(['audit:read'])
    const cases: [unknown, string][] = [
      [{ name: fresh(), permissions: ['users:delete'] }, 'body.permissions.0'],
      [{ name: fresh(), permissions: ['audit:read', 'nope'] }, 'body.permissions.1'],
      [{ name: 'Admin' }, 'body.name'],
      [{ name: 'member' }, 'body.name'],
      [{ name: 'ADMIN', permissions: [] }, 'body.name'],
      [{ name: fresh(), kind: 'organization', permissions: ['users:read'] }, 'body.permissions'],
      [
        {
          name: fresh(),
          resourceScopes: [{ resource: 'https://api.nowhere.example', scopes: [] }],
        },
        'body.resourceScopes.0.resource',
      ],
      [{ name: '' }, 'body.name'],
      [{ name: 'x'.repeat(65) }, 'body.name'],
      [{ name: fresh(), description: 'd'.repeat(501) }, 'body.description'],
      [{ name: fresh(), kind: 'global' }, 'body.kind'],
      [{ name: 7 }, 'body.name'],
      [{ name: fresh(), permissions: 'users:read' }, 'body.permissions'],
    ]
    for (const [body, path] of cases) {
      await unchanged(server, t.tenantId, async () => expectValidation(await create(body), path))
    }
    const unknown = await create({ name: fresh(), permissions: ['users:delete'] })
    assert.match(JSON.stringify(unknown.body.details.issues), /users:delete/)
    for (const body of [{ permissions: ['nope'] }, { name: 'Member' }]) {
      await unchanged(server, t.tenantId, async () =>
        expectValidation(await call('PATCH', `roles/${taken.id}`, body, admin)),
      )
    }
  })

  test('a name already used, in any case: 409 name_taken, nothing changed', async () => {
    const name = fresh('Billing')
    const first = await role([], name)
    const other = await role([])
    await unchanged(server, t.tenantId, async () => {
      expectError(await create({ name: name.toUpperCase() }), 409, 'name_taken')
      expectError(
        await call('PATCH', `roles/${other.id}`, { name: name.toLowerCase() }, admin),
        409,
        'name_taken',
      )
    })
    // Renaming a role to its own name in another case is no clash.
    const same = await call('PATCH', `roles/${first.id}`, { name: name.toUpperCase() }, admin)
    assert.equal(same.status, 200)
  })

  test('another tenant’s role, an unknown id: 404, untouched', async () => {
    const other = await createTenant(server)
    const theirs = await create({ name: fresh() }, other.admin.accessToken, other.slug)
    const id = theirs.body.role.id
    const u = await signup(server, t.slug)
    await unchanged(server, [t.tenantId, other.tenantId], async () => {
      for (const path of [
        `roles/${id}`,
        'roles/not-a-uuid',
        'roles/0190a4e0-0000-7000-8000-000000000000',
      ]) {
        expectError(await call('GET', path, undefined, admin), 404, 'not_found')
        expectError(await call('PATCH', path, { name: 'Y' }, admin), 404, 'not_found')
        expectError(await call('DELETE', path, undefined, admin), 404, 'not_found')
      }
      expectValidation(await assign(u.user.id, [theirs.body.role.name]), 'body.roles.0')
    })
  })

  test('a Member gets 403 admin_required on every roles route; an API key may use them', async () => {
    const member = await signup(server, t.slug)
    await unchanged(server, t.tenantId, async () => {
      expectError(await call('GET', 'roles', undefined, member.accessToken), 403, 'admin_required')
      expectError(await create({ name: fresh() }, member.accessToken), 403, 'admin_required')
      expectError(await assign(member.user.id, [], member.accessToken), 403, 'admin_required')
    })
    const key = await insertApiKey(server, t.tenantId)
    assert.equal((await create({ name: fresh(), permissions: ['users:write'] }, key)).status, 200)
  })

  test('at most 100 custom roles: the 101st is 400 limit_exceeded, nothing changed', async () => {
    const full = await createTenant(server)
    const token = full.admin.accessToken
    for (let i = 0; i < 100; i++) {
      assert.equal((await create({ name: `r${i}` }, token, full.slug)).status, 200)
    }
    await unchanged(server, full.tenantId, async () =>
      expectError(await create({ name: 'one more' }, token, full.slug), 400, 'limit_exceeded'),
    )
    // Paged (roles-paging.test.ts): one page of 200 holds the built-ins and all 100.
    const list = await call('GET', 'roles?limit=200', undefined, token, full.slug)
    assert.equal(list.body.items.length, 102)
    assert.equal(list.body.nextCursor, null)
  })
})

describe('assignment and effective permissions', () => {
  test('PUT users/{id}/roles sets the roles; records, /me and the admin routes follow', async () => {
    const reader = await role(['users:read'])
    const u = await signup(server, t.slug)
    const mark = await auditMark(server, t.tenantId)
    const res = await assign(u.user.id, [reader.name.toUpperCase(), reader.name])
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.roles, [reader.name])
    assert.equal(res.body.role, 'Member')
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.metadata]),
      [['UserRolesChanged', { added: [reader.name], removed: [], via: 'admin' }]],
    )
    const mine = await me(u.accessToken)
    assert.deepEqual(mine.body.roles, [reader.name])
    assert.deepEqual(mine.body.permissions, ['users:read'])
    // users:read opens GET users (and the user's record there carries the role)...
    const list = await call('GET', 'users', undefined, u.accessToken)
    assert.equal(list.status, 200)
    assert.deepEqual(list.body.items.find((x: { id: string }) => x.id === u.user.id).roles, [
      reader.name,
    ])
    // ...and nothing else: some permissions but not the route's is permission_required.
    await unchanged(server, t.tenantId, async () => {
      const refused = await call('PATCH', `users/${u.user.id}`, { displayName: 'X' }, u.accessToken)
      expectError(refused, 403, 'permission_required')
      assert.deepEqual(refused.body.details, {
        reason: 'permission_required',
        permission: 'users:write',
      })
      const tenant = await call('GET', 'tenant', undefined, u.accessToken)
      expectError(tenant, 403, 'permission_required')
      assert.equal(tenant.body.details.permission, 'tenant:read')
      expectError(await call('GET', 'audit', undefined, u.accessToken), 403, 'permission_required')
    })
    // Taken away: refused at once, with the same token.
    const cleared = await assign(u.user.id, [])
    assert.deepEqual(cleared.body.roles, [])
    expectError(await call('GET', 'users', undefined, u.accessToken), 403, 'admin_required')
    assert.deepEqual((await me(u.accessToken)).body.permissions, [])
  })

  test('deleting a role takes it from its holders', async () => {
    const h = await holder(['audit:read'])
    assert.equal((await call('GET', 'audit', undefined, h.token)).status, 200)
    assert.equal((await call('DELETE', `roles/${h.role.id}`, undefined, admin)).status, 200)
    expectError(await call('GET', 'audit', undefined, h.token), 403, 'admin_required')
    assert.deepEqual((await me(h.token)).body.roles, [])
  })

  test('an Admin holds every permission whatever its custom roles', async () => {
    const r = await role(['audit:read'])
    const a = await signup(server, t.slug)
    await setUser(server, t.tenantId, a.user.id, { role: 'Admin' })
    await assign(a.user.id, [r.name])
    assert.equal((await me(a.accessToken)).body.permissions.length, 14)
  })

  test('PUT roles: unknown names, too many, a bad user: the documented error, nothing changed', async () => {
    const u = await signup(server, t.slug)
    await unchanged(server, t.tenantId, async () => {
      expectValidation(await assign(u.user.id, ['No such role']), 'body.roles.0')
      expectValidation(await assign(u.user.id, ['Admin']), 'body.roles.0')
      expectValidation(
        await assign(
          u.user.id,
          Array.from({ length: 51 }, (_, i) => `r${i}`),
        ),
        'body.roles',
      )
      expectValidation(
        await call('PUT', `users/${u.user.id}/roles`, { roles: 'x' }, admin),
        'body.roles',
      )
      expectValidation(await assign('not-a-uuid', []), 'params.userId')
      expectError(await assign('0190a4e0-0000-7000-8000-000000000000', []), 404, 'not_found')
    })
  })
})

describe('no escalation', () => {
  test('roles:write grants, creates and edits only within what the caller holds', async () => {
    const manager = await holder(['roles:write', 'users:read'])
    const wide = await role(['users:write'])
    const narrow = await role(['users:read'])
    const target = await signup(server, t.slug)
    await unchanged(server, t.tenantId, async () => {
      const refused = await assign(target.user.id, [wide.name], manager.token)
      expectError(refused, 403, 'permission_required')
      assert.equal(refused.body.details.permission, 'users:write')
      expectError(
        await create(
          { name: fresh(), permissions: ['users:read', 'apikeys:write'] },
          manager.token,
        ),
        403,
        'permission_required',
      )
      expectError(
        await call('PATCH', `roles/${narrow.id}`, { permissions: ['users:write'] }, manager.token),
        403,
        'permission_required',
      )
      // Nor may it narrow, delete or take away a role it could not grant.
      expectError(
        await call('PATCH', `roles/${wide.id}`, { permissions: [] }, manager.token),
        403,
        'permission_required',
      )
      expectError(
        await call('DELETE', `roles/${wide.id}`, undefined, manager.token),
        403,
        'permission_required',
      )
    })
    await assign(target.user.id, [wide.name])
    await unchanged(server, t.tenantId, async () =>
      expectError(await assign(target.user.id, [], manager.token), 403, 'permission_required'),
    )
    // Within what it holds, it may: keeping a role it could not grant, adding one it holds.
    const kept = await assign(target.user.id, [wide.name, narrow.name], manager.token)
    assert.equal(kept.status, 200)
    assert.deepEqual(
      kept.body.roles,
      [wide, narrow]
        .sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()))
        .map((r) => r.name),
    )
    const mine = await holder(['roles:write', 'users:read', 'users:write'])
    assert.equal((await assign(target.user.id, [narrow.name], mine.token)).status, 200)
    assert.equal(
      (await create({ name: fresh(), permissions: ['users:read'] }, manager.token)).status,
      200,
    )
  })
})
