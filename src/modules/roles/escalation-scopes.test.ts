// No escalation counts every resource scope a caller holds (CONTRACT §17, Assignment): the
// scopes whose §11 `roles` name Member are held by anyone (every user is at least a Member),
// and so are those whose `roles` name one of the caller's custom roles. A roles:write
// caller may therefore make a role listing them; a scope it is not granted stays refused
// (403 permission_required, nothing stored).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import { createApiResource } from '../../../test/fixtures/oidc.ts'
import { createTenant, signup, startTestServer } from '../../../test/helpers.ts'

const NOTES = 'https://notes.example.com/api'

test("no escalation by resource scope: Member's scopes and those a caller's role is named in count as held; others are 403 and nothing changes", async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const admin = tenant.admin.accessToken
  const call = async (method: string, path: string, body: unknown, token = admin) => {
    const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, { token })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }
  await call('POST', '/roles', { name: 'Manager', permissions: ['roles:write'] })
  await createApiResource(server, tenant.slug, admin, {
    name: 'Notes API',
    identifier: NOTES,
    scopes: [
      { name: 'notes:read' },
      { name: 'notes:audit', roles: ['Manager'] },
      { name: 'notes:admin', roles: ['Admin'] },
    ],
  })
  const who = await signup(server, tenant.slug)
  await call('PUT', `/users/${who.user.id}/roles`, { roles: ['Manager'] })
  const manager = who.accessToken as string
  const key = (
    await createKey(server, tenant.slug, admin, {
      name: 'roles only',
      environment: 'live',
      permissions: ['roles:write'],
    })
  ).plaintext
  const make = (name: string, scopes: string[], token: string) =>
    server.request(
      'POST',
      `/v1/${tenant.slug}/roles`,
      { name, resourceScopes: [{ resource: NOTES, scopes }] },
      { token },
    )

  // Held: notes:read by being a Member at all, notes:audit through the Manager role.
  const readers = await make('Readers', ['notes:read'], manager)
  assert.equal(readers.status, 200, JSON.stringify(readers.body))
  const auditors = await make('Auditors', ['notes:read', 'notes:audit'], manager)
  assert.equal(auditors.status, 200, JSON.stringify(auditors.body))
  // A key holds what any user holds, no more.
  const keyed = await make('Key readers', ['notes:read'], key)
  assert.equal(keyed.status, 200, JSON.stringify(keyed.body))

  for (const [scopes, token] of [
    [['notes:read', 'notes:admin'], manager],
    [['notes:audit'], key],
    [['notes:admin'], key],
  ] as const) {
    const refused = await unchanged(server, tenant.tenantId, () =>
      make('Greedy', [...scopes], token),
    )
    expectError(refused, 403, 'permission_required')
    assert.equal(refused.body.details.resource, NOTES)
  }
  // Granting the held-scope role to another user passes the rule too.
  const other = await signup(server, tenant.slug)
  await call('PUT', `/users/${other.user.id}/roles`, { roles: ['Readers', 'Auditors'] }, manager)
})
