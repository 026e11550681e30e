// No escalation through organizations (CONTRACT §17, Assignment; §18: an organization token
// carries what its organization roles grant): a caller holding organizations:write gives a
// member, an invitation or a JIT rule only organization roles whose every resource scope it
// holds itself; a role with a scope it lacks is 403 permission_required and nothing changes.
// An Admin gives any (the review of the organizations work found the check missing).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { createApiResource } from '../../../test/fixtures/oidc.ts'
import { createTenant, signup, startTestServer } from '../../../test/helpers.ts'

const LEDGER = 'https://ledger.example.com/api'

test('organization roles: no escalation by resource scope on members, invitations and JIT roles', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const admin = tenant.admin.accessToken
  const call = (method: string, path: string, body: unknown, token = admin) =>
    server.request(method, `/v1/${tenant.slug}${path}`, body, { token })
  const ok = async (method: string, path: string, body: unknown, token = admin) => {
    const res = await call(method, path, body, token)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }
  await createApiResource(server, tenant.slug, admin, {
    name: 'Ledger API',
    identifier: LEDGER,
    scopes: [
      { name: 'ledger:read', roles: ['Member'] },
      { name: 'ledger:admin', roles: ['Admin'] },
    ],
  })
  await ok('POST', '/roles', { name: 'Org managers', permissions: ['organizations:write'] })
  await ok('POST', '/roles', {
    name: 'Org readers',
    kind: 'organization',
    resourceScopes: [{ resource: LEDGER, scopes: ['ledger:read'] }],
  })
  await ok('POST', '/roles', {
    name: 'Org treasurers',
    kind: 'organization',
    resourceScopes: [{ resource: LEDGER, scopes: ['ledger:admin'] }],
  })
  const manager = await signup(server, tenant.slug)
  await ok('PUT', `/users/${manager.user.id}/roles`, { roles: ['Org managers'] })
  const token = manager.accessToken as string
  const member = await signup(server, tenant.slug)
  const org = (await ok('POST', '/organizations', { name: 'Acme' }, token)).organization

  // Held (ledger:read is every Member's): given.
  await ok(
    'PUT',
    `/organizations/${org.id}/members/${member.user.id}`,
    { roles: ['Org readers'] },
    token,
  )
  // Not held: refused everywhere, nothing stored.
  const attempts = [
    () =>
      call(
        'PUT',
        `/organizations/${org.id}/members/${manager.user.id}`,
        { roles: ['Org treasurers'] },
        token,
      ),
    () =>
      call(
        'PUT',
        `/organizations/${org.id}/members/${member.user.id}`,
        { roles: ['Org treasurers'] },
        token,
      ),
    () =>
      call(
        'POST',
        `/organizations/${org.id}/invitations`,
        { email: 'new@example.com', roles: ['Org treasurers'], sendEmail: false },
        token,
      ),
    () =>
      call(
        'POST',
        '/organizations',
        { name: 'Greedy', jit: { emailDomains: ['greedy.example'], roles: ['Org treasurers'] } },
        token,
      ),
    () =>
      call(
        'PATCH',
        `/organizations/${org.id}`,
        { jit: { emailDomains: ['acme.example'], roles: ['Org treasurers'] } },
        token,
      ),
  ]
  for (const attempt of attempts) {
    const refused = await unchanged(server, tenant.tenantId, attempt)
    expectError(refused, 403, 'permission_required')
  }
  // An Admin holds every scope: the same role is given.
  const given = await ok('PUT', `/organizations/${org.id}/members/${member.user.id}`, {
    roles: ['Org treasurers'],
  })
  assert.deepEqual(given.member.roles, ['Org treasurers'])
})
