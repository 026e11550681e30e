// Organizations inside a tenant (CONTRACT §18) over real HTTP: the organizations API and its
// limits, members with organization roles, me/organizations, who may read (a member, or a
// holder of organizations:write; anyone else 404), isolation between organizations of one
// tenant and between tenants, and memberships gone with their organization or their user.
// Every refusal answers its documented error and changes nothing.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
let other: TenantFixture
let admin: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
  admin = t.admin.accessToken
})

let n = 0
const fresh = (prefix: string) => `${prefix} ${++n} ${Math.random().toString(36).slice(2, 6)}`
const call = (method: string, path: string, body: unknown, token: string, slug = t.slug) =>
  server.request(method, `/v1/${slug}/${path}`, body, { token })

async function orgRole(name = fresh('OrgRole'), tenant = t) {
  const res = await call(
    'POST',
    'roles',
    { name, kind: 'organization' },
    tenant.admin.accessToken,
    tenant.slug,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.role as { id: string; name: string }
}

async function organization(body: Record<string, unknown> = {}, tenant = t) {
  const res = await call(
    'POST',
    'organizations',
    { name: fresh('Org'), ...body },
    tenant.admin.accessToken,
    tenant.slug,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.organization as { id: string; name: string }
}

async function join(orgId: string, userId: string, roles: string[] = [], tenant = t) {
  const res = await call(
    'PUT',
    `organizations/${orgId}/members/${userId}`,
    { roles },
    tenant.admin.accessToken,
    tenant.slug,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.member
}

test('an organization is created, read, changed and listed; its audit events name it', async () => {
  const billing = await orgRole()
  const mark = await auditMark(server, t.tenantId)
  const created = await call(
    'POST',
    'organizations',
    {
      name: '  Acme  ',
      description: 'A customer',
      jit: { emailDomains: ['Acme.Example', 'acme.example'], roles: [billing.name.toLowerCase()] },
    },
    admin,
  )
  assert.equal(created.status, 200, JSON.stringify(created.body))
  const org = created.body.organization
  assert.deepEqual(Object.keys(org).sort(), [
    'createdAt',
    'description',
    'id',
    'jit',
    'memberCount',
    'mfaRequired',
    'name',
    'updatedAt',
  ])
  assert.equal(org.name, 'Acme')
  assert.equal(org.mfaRequired, false)
  assert.deepEqual(org.jit, { emailDomains: ['acme.example'], roles: [billing.name] })
  assert.equal(org.memberCount, 0)

  const read = await call('GET', `organizations/${org.id}`, undefined, admin)
  assert.deepEqual(read.body.organization, org)
  const patched = await call(
    'PATCH',
    `organizations/${org.id}`,
    { mfaRequired: true, description: null },
    admin,
  )
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  assert.equal(patched.body.organization.mfaRequired, true)
  assert.equal(patched.body.organization.description, null)

  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => [e.action, e.metadata]),
    [
      ['OrganizationCreated', { organizationId: org.id, name: 'Acme' }],
      [
        'OrganizationUpdated',
        { organizationId: org.id, name: 'Acme', fields: ['description', 'mfaRequired'] },
      ],
    ],
  )

  // The list pages through every organization, oldest first.
  const second = await organization()
  const page1 = await call('GET', 'organizations?limit=1', undefined, admin)
  assert.equal(page1.body.items.length, 1)
  assert.ok(page1.body.nextCursor)
  const seen = [page1.body.items[0].id]
  let cursor = page1.body.nextCursor
  while (cursor) {
    const page = await call('GET', `organizations?limit=1&cursor=${cursor}`, undefined, admin)
    seen.push(...page.body.items.map((o: { id: string }) => o.id))
    cursor = page.body.nextCursor
  }
  assert.ok(seen.includes(org.id) && seen.includes(second.id))
  assert.equal(new Set(seen).size, seen.length)
})

test('bad organization input: the documented error, and nothing changed', async () => {
  const tenantRole = await call('POST', 'roles', { name: fresh('TenantRole') }, admin)
  const taken = await organization({ jit: { emailDomains: ['taken.example'], roles: [] } })
  const cases: [unknown, string | undefined][] = [
    [{}, 'body.name'],
    [{ name: '' }, 'body.name'],
    [{ name: '   ' }, 'body.name'],
    [{ name: 'x'.repeat(121) }, 'body.name'],
    [{ name: 'ok', description: 'x'.repeat(501) }, 'body.description'],
    [{ name: 'ok', jit: { emailDomains: ['not a domain'], roles: [] } }, 'body.jit.emailDomains.0'],
    [{ name: 'ok', jit: { emailDomains: [], roles: ['nope'] } }, 'body.jit.roles.0'],
    // A tenant role is no organization role.
    [
      { name: 'ok', jit: { emailDomains: [], roles: [tenantRole.body.role.name] } },
      'body.jit.roles.0',
    ],
  ]
  const target = await organization()
  await unchanged(server, t.tenantId, async () => {
    for (const [body, path] of cases) {
      expectValidation(await call('POST', 'organizations', body, admin), path)
    }
    expectError(
      await call(
        'PATCH',
        `organizations/${target.id}`,
        { name: 'renamed', jit: { emailDomains: ['taken.example'], roles: [] } },
        admin,
      ),
      409,
      'domain_taken',
    )
    expectValidation(await call('PATCH', `organizations/${target.id}`, { name: '' }, admin))
    expectError(
      await call('PATCH', `organizations/${crypto.randomUUID()}`, { name: 'x' }, admin),
      404,
      'not_found',
    )
    expectError(
      await call('DELETE', `organizations/${crypto.randomUUID()}`, undefined, admin),
      404,
      'not_found',
    )
    expectValidation(await call('GET', 'organizations?cursor=garbage', undefined, admin))
  })
  // The domain is still the first organization's.
  const kept = await call('GET', `organizations/${taken.id}`, undefined, admin)
  assert.deepEqual(kept.body.organization.jit.emailDomains, ['taken.example'])
})

test('members: PUT adds or sets organization roles, DELETE removes; refusals change nothing', async () => {
  const [a, b] = [await orgRole(), await orgRole()]
  const org = await organization()
  const user = await signup(server, t.slug)
  const mark = await auditMark(server, t.tenantId)
  const added = await join(org.id, user.user.id, [b.name, a.name])
  assert.deepEqual(Object.keys(added).sort(), ['email', 'joinedAt', 'roles', 'userId'])
  assert.deepEqual(added.roles, [a.name, b.name].sort())
  const set = await join(org.id, user.user.id, [a.name])
  assert.deepEqual(set.roles, [a.name])
  assert.equal(set.joinedAt, added.joinedAt)
  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => [e.action, e.userId, e.metadata]),
    [
      [
        'OrganizationMemberAdded',
        user.user.id,
        { organizationId: org.id, roles: [a.name, b.name].sort(), via: 'admin' },
      ],
      [
        'OrganizationMemberRolesChanged',
        user.user.id,
        { organizationId: org.id, added: [], removed: [b.name], via: 'admin' },
      ],
    ],
  )

  const tenantRole = await call('POST', 'roles', { name: fresh('TenantRole') }, admin)
  const stranger = await signup(server, other.slug)
  const nonMember = await signup(server, t.slug)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    const path = `organizations/${org.id}/members/${user.user.id}`
    expectValidation(await call('PUT', path, { roles: ['nope'] }, admin), 'body.roles.0')
    expectValidation(
      await call('PUT', path, { roles: [tenantRole.body.role.name] }, admin),
      'body.roles.0',
    )
    expectValidation(await call('PUT', path, {}, admin), 'body.roles')
    // A user of another tenant is no user here.
    expectError(
      await call(
        'PUT',
        `organizations/${org.id}/members/${stranger.user.id}`,
        { roles: [] },
        admin,
      ),
      404,
      'not_found',
    )
    expectError(
      await call(
        'PUT',
        `organizations/${crypto.randomUUID()}/members/${user.user.id}`,
        { roles: [] },
        admin,
      ),
      404,
      'not_found',
    )
    expectError(
      await call(
        'DELETE',
        `organizations/${org.id}/members/${nonMember.user.id}`,
        undefined,
        admin,
      ),
      404,
      'not_found',
    )
    // A Member holds no organizations:write.
    expectError(await call('PUT', path, { roles: [] }, user.accessToken), 403, 'admin_required')
    expectError(await call('DELETE', path, undefined, user.accessToken), 403, 'admin_required')
  })

  const list = await call('GET', `organizations/${org.id}/members`, undefined, admin)
  assert.deepEqual(
    list.body.items.map((m: { userId: string; roles: string[] }) => [m.userId, m.roles]),
    [[user.user.id, [a.name]]],
  )
  assert.equal(
    (await call('GET', `organizations/${org.id}`, undefined, admin)).body.organization.memberCount,
    1,
  )
  const removed = await call(
    'DELETE',
    `organizations/${org.id}/members/${user.user.id}`,
    undefined,
    admin,
  )
  assert.deepEqual(removed.body, { ok: true })
  assert.deepEqual((await call('GET', 'me/organizations', undefined, user.accessToken)).body, {
    items: [],
  })
})

test('a member reads its organization and its members; a non-member of it, or of another tenant, gets 404', async () => {
  const role = await orgRole()
  const orgA = await organization({ name: 'Alpha' })
  const orgB = await organization({ name: 'Beta' })
  const alice = await signup(server, t.slug)
  const bob = await signup(server, t.slug)
  await join(orgA.id, alice.user.id, [role.name])
  await join(orgB.id, bob.user.id)
  await join(orgB.id, alice.user.id)

  const mine = await call('GET', 'me/organizations', undefined, alice.accessToken)
  assert.deepEqual(mine.body, {
    items: [
      { id: orgA.id, name: 'Alpha', roles: [role.name] },
      { id: orgB.id, name: 'Beta', roles: [] },
    ],
  })
  assert.equal(
    (await call('GET', `organizations/${orgA.id}`, undefined, alice.accessToken)).status,
    200,
  )
  const members = await call(
    'GET',
    `organizations/${orgB.id}/members`,
    undefined,
    alice.accessToken,
  )
  assert.equal(members.status, 200)
  assert.equal(members.body.items.length, 2)

  // Bob belongs to B only: A is unknown to him, as is any id, and a member cannot list
  // the organizations of the tenant.
  for (const path of [`organizations/${orgA.id}`, `organizations/${orgA.id}/members`]) {
    expectError(await call('GET', path, undefined, bob.accessToken), 404, 'not_found')
  }
  expectError(await call('GET', 'organizations', undefined, bob.accessToken), 403, 'admin_required')
  // A user of another tenant: its token is not for this tenant at all; its own tenant
  // knows no such organization.
  const stranger = await signup(server, other.slug)
  expectError(
    await call('GET', `organizations/${orgA.id}`, undefined, stranger.accessToken),
    401,
    'token_invalid',
  )
  expectError(
    await call('GET', `organizations/${orgA.id}`, undefined, stranger.accessToken, other.slug),
    404,
    'not_found',
  )
  expectError(
    await call('GET', `organizations/${orgA.id}`, undefined, other.admin.accessToken, other.slug),
    404,
    'not_found',
  )
  // An admin of another tenant cannot add its users to this one's organization from there.
  expectError(
    await call(
      'PUT',
      `organizations/${orgA.id}/members/${stranger.user.id}`,
      { roles: [] },
      other.admin.accessToken,
      other.slug,
    ),
    404,
    'not_found',
  )
  // A Member holding organizations:write through a custom role reads every organization.
  const manager = await call(
    'POST',
    'roles',
    { name: fresh('Manager'), permissions: ['organizations:write'] },
    admin,
  )
  const carol = await signup(server, t.slug)
  await call('PUT', `users/${carol.user.id}/roles`, { roles: [manager.body.role.name] }, admin)
  assert.equal(
    (await call('GET', `organizations/${orgA.id}`, undefined, carol.accessToken)).status,
    200,
  )
})

test('deleting an organization or a user leaves no membership behind', async () => {
  const role = await orgRole()
  const org = await organization()
  const keep = await organization()
  const user = await signup(server, t.slug)
  const leaver = await signup(server, t.slug)
  await join(org.id, user.user.id, [role.name])
  await join(keep.id, leaver.user.id, [role.name])
  await join(org.id, leaver.user.id)

  const mark = await auditMark(server, t.tenantId)
  assert.deepEqual((await call('DELETE', `organizations/${org.id}`, undefined, admin)).body, {
    ok: true,
  })
  assert.deepEqual(
    (await auditSince(server, t.tenantId, mark)).map((e) => [e.action, e.metadata]),
    [['OrganizationDeleted', { organizationId: org.id, name: org.name }]],
  )
  expectError(await call('GET', `organizations/${org.id}`, undefined, admin), 404, 'not_found')
  assert.deepEqual((await call('GET', 'me/organizations', undefined, user.accessToken)).body, {
    items: [],
  })
  const snapshot = async () => {
    const { tenantSnapshot } = await import('../../../test/db.ts')
    return tenantSnapshot(server, t.tenantId)
  }
  const rows = await snapshot()
  assert.ok(
    rows.organizationMembers.every((m: { organizationId: string }) => m.organizationId !== org.id),
  )
  assert.ok(
    rows.organizationMemberRoles.every(
      (m: { organizationId: string }) => m.organizationId !== org.id,
    ),
  )

  const mark2 = await auditMark(server, t.tenantId)
  assert.equal((await call('DELETE', `users/${leaver.user.id}`, undefined, admin)).status, 200)
  const after = await snapshot()
  assert.ok(after.organizationMembers.every((m: { userId: string }) => m.userId !== leaver.user.id))
  assert.ok(
    after.organizationMemberRoles.every((m: { userId: string }) => m.userId !== leaver.user.id),
  )
  const removed = (await auditSince(server, t.tenantId, mark2)).filter(
    (e) => e.action === 'OrganizationMemberRemoved',
  )
  assert.deepEqual(
    removed.map((e) => [e.userId, e.metadata]),
    [[leaver.user.id, { organizationId: keep.id, via: 'user_deleted' }]],
  )
  const kept = await call('GET', `organizations/${keep.id}`, undefined, admin)
  assert.equal(kept.body.organization.memberCount, 0)
})

test('at most 10,000 organizations a tenant: the next is 400 limit_exceeded and changes nothing', async () => {
  const full = await createTenant(server)
  const { organizations } = await import('../../db/schema.ts')
  const now = new Date()
  const rows = Array.from({ length: 9_999 }, (_, i) => ({
    tenantId: full.tenantId,
    id: crypto.randomUUID(),
    name: `Bulk ${i}`,
    createdAt: now,
    updatedAt: now,
  }))
  for (let i = 0; i < rows.length; i += 1000) {
    await server.deps.db.insert(organizations).values(rows.slice(i, i + 1000))
  }
  const last = await call(
    'POST',
    'organizations',
    { name: 'The 10,000th' },
    full.admin.accessToken,
    full.slug,
  )
  assert.equal(last.status, 200, JSON.stringify(last.body))
  await unchanged(server, full.tenantId, async () => {
    expectError(
      await call(
        'POST',
        'organizations',
        { name: 'One too many' },
        full.admin.accessToken,
        full.slug,
      ),
      400,
      'limit_exceeded',
    )
  })
})
