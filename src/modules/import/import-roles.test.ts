// Import rows with custom roles (CONTRACT §17): `roles` given to the user created or
// updated (UserRolesChanged via "import"); a name that is no tenant role is that row's
// error `validation`, nothing of it stored, and the other rows go on.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditRows, unchanged, userByEmail } from '../../../test/db.ts'
import { expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { userRoleNames } from '../roles/members.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const call = (method: string, path: string, body: unknown) =>
  server.request(method, `/v1/${t.slug}/${path}`, body, { token: t.admin.accessToken })

let n = 0
async function role(kind?: string) {
  const res = await call('POST', 'roles', { name: `Imported ${++n}`, ...(kind ? { kind } : {}) })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.role as { id: string; name: string }
}

test('import: rows with roles create users holding them; an unknown role is that row’s validation error', async () => {
  const a = await role()
  const b = await role()
  const org = await role('organization')
  const [one, two, bad, orgRow] = ['one', 'two', 'bad', 'org'].map((p) => uniqueEmail(p))
  const res = await call('POST', 'users/import', {
    users: [
      { email: one, roles: [a.name, b.name.toLowerCase()] },
      { email: two },
      { email: bad, roles: [a.name, 'No such role'] },
      { email: orgRow, roles: [org.name] },
    ],
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const [r1, r2, r3, r4] = res.body.results
  assert.equal(r1.status, 'created')
  assert.equal(r2.status, 'created')
  assert.deepEqual(r3, { index: 2, status: 'error', reason: 'validation' })
  assert.deepEqual(r4, { index: 3, status: 'error', reason: 'validation' })
  assert.equal(await userByEmail(server, t.tenantId, bad), undefined)
  assert.equal(await userByEmail(server, t.tenantId, orgRow), undefined)
  assert.deepEqual(await userRoleNames(server.deps.db, t.tenantId, r1.id), [a.name, b.name].sort())
  assert.deepEqual(await userRoleNames(server.deps.db, t.tenantId, r2.id), [])
  const events = (await auditRows(server, t.tenantId, 'UserRolesChanged')).filter(
    (e) => e.metadata.via === 'import',
  )
  assert.equal(events.length, 1)
  assert.equal(events[0].userId, r1.id)
  assert.deepEqual(events[0].metadata, {
    added: [a.name, b.name].sort(),
    removed: [],
    via: 'import',
  })

  // An update adds the roles to those held; one already held is no change.
  const again = await call('POST', 'users/import', {
    onConflict: 'update',
    users: [{ email: one, roles: [a.name] }],
  })
  assert.equal(again.body.results[0].status, 'updated', JSON.stringify(again.body))
  assert.deepEqual(await userRoleNames(server.deps.db, t.tenantId, r1.id), [a.name, b.name].sort())
  const after = (await auditRows(server, t.tenantId, 'UserRolesChanged')).filter(
    (e) => e.metadata.via === 'import',
  )
  assert.equal(after.length, 1)
})

test('import: roles that are not a list of 1..64-character names (at most 50): 400, nothing stored', async () => {
  for (const roles of [
    'Support',
    [''],
    [5],
    ['r'.repeat(65)],
    Array.from({ length: 51 }, () => 'r'),
  ]) {
    await unchanged(server, t.tenantId, async () => {
      const res = await call('POST', 'users/import', {
        users: [{ email: uniqueEmail('x'), roles }],
      })
      expectValidation(res)
    })
  }
})

test('import: a row making an Admin from a user who is no Admin is that row’s permission_required', async () => {
  const importer = await call('POST', 'roles', {
    name: `Importers ${++n}`,
    permissions: ['users:write'],
  })
  assert.equal(importer.status, 200, JSON.stringify(importer.body))
  const u = await signup(server, t.slug)
  const put = await call('PUT', `users/${u.user.id}/roles`, { roles: [importer.body.role.name] })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  const [boss, peer] = [uniqueEmail('boss'), uniqueEmail('peer')]
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/users/import`,
    { users: [{ email: boss, role: 'Admin' }, { email: peer }] },
    { token: u.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.results[0], {
    index: 0,
    status: 'error',
    reason: 'permission_required',
  })
  assert.equal(res.body.results[1].status, 'created')
  assert.equal(await userByEmail(server, t.tenantId, boss), undefined)
})

test('no escalation by import: a row naming a role with a permission the importer lacks is that row’s error permission_required, nothing of it stored', async () => {
  const importer = await call('POST', 'roles', {
    name: `Importer ${++n}`,
    permissions: ['users:write'],
  })
  const stronger = await call('POST', 'roles', {
    name: `Imported strong ${++n}`,
    permissions: ['users:write', 'tenant:write'],
  })
  assert.equal(importer.status, 200, JSON.stringify(importer.body))
  assert.equal(stronger.status, 200, JSON.stringify(stronger.body))
  const u = await signup(server, t.slug)
  const put = await call('PUT', `users/${u.user.id}/roles`, { roles: [importer.body.role.name] })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  const email = uniqueEmail('escalate')
  await unchanged(server, t.tenantId, async () => {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/users/import`,
      { users: [{ email, roles: [stronger.body.role.name] }] },
      { token: u.accessToken as string },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.results, [
      { index: 0, status: 'error', reason: 'permission_required' },
    ])
  })
})
