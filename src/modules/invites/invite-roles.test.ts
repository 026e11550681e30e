// Custom roles on invitations (CONTRACT §17): `roles` on creation (each a tenant role, else
// 400 validation, nothing changed), shown in the record, given at acceptance with
// UserRolesChanged via "invite"; and the base role rule: only an Admin invites an Admin.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditRows, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
let admin: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
})

const call = (method: string, path: string, body: unknown, token = admin) =>
  server.request(method, `/v1/${t.slug}/${path}`, body, { token })

let n = 0
async function role(permissions: string[] = [], kind?: string) {
  const res = await call('POST', 'roles', {
    name: `Invited ${++n}`,
    permissions,
    ...(kind ? { kind } : {}),
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.role as { id: string; name: string }
}

describe('invitations with roles', () => {
  test('roles are kept, shown, and given on acceptance (UserRolesChanged via invite)', async () => {
    const a = await role(['users:read'])
    const b = await role()
    const email = uniqueEmail('roled')
    const res = await call('POST', 'invites', {
      email,
      sendEmail: false,
      roles: [b.name.toUpperCase(), a.name, a.name],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.invite.roles, [a.name, b.name].sort())
    const list = await call('GET', 'invites', undefined)
    const listed = list.body.items.find((i: { id: string }) => i.id === res.body.invite.id)
    assert.deepEqual(listed.roles, [a.name, b.name].sort())

    const accepted = await server.request('POST', '/v1/invites/accept', {
      token: res.body.token,
      password: STRONG_PASSWORD,
    })
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body))
    const me = await call('GET', 'me', undefined, accepted.body.accessToken)
    assert.deepEqual(me.body.roles, [a.name, b.name].sort())
    assert.deepEqual(me.body.permissions, ['users:read'])
    const events = await auditRows(server, t.tenantId, 'UserRolesChanged')
    const event = events.find((e) => e.userId === me.body.id)
    assert.deepEqual(event?.metadata, {
      added: [a.name, b.name].sort(),
      removed: [],
      via: 'invite',
    })
  })

  test('a role deleted before acceptance is skipped; none left: no UserRolesChanged', async () => {
    const gone = await role()
    const res = await call('POST', 'invites', {
      email: uniqueEmail('gone'),
      sendEmail: false,
      roles: [gone.name],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal((await call('DELETE', `roles/${gone.id}`, undefined)).status, 200)
    const accepted = await server.request('POST', '/v1/invites/accept', {
      token: res.body.token,
      password: STRONG_PASSWORD,
    })
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body))
    const me = await call('GET', 'me', undefined, accepted.body.accessToken)
    assert.deepEqual(me.body.roles, [])
    const events = await auditRows(server, t.tenantId, 'UserRolesChanged')
    assert.equal(events.filter((e) => e.userId === me.body.id).length, 0)
  })

  test('an unknown role, an organization role or a malformed list: 400 validation, nothing changed', async () => {
    const known = await role()
    const org = await role([], 'organization')
    const bad: [unknown, string][] = [
      [[known.name, 'No such role'], 'body.roles.1'],
      [[org.name], 'body.roles.0'],
      ['Support', 'body.roles'],
      [[''], 'body.roles.0'],
      [[7], 'body.roles.0'],
      [Array.from({ length: 51 }, () => known.name), 'body.roles'],
    ]
    for (const [roles, issue] of bad) {
      await unchanged(server, t.tenantId, async () => {
        const res = await call('POST', 'invites', { email: uniqueEmail('bad'), roles })
        expectValidation(res, issue)
      })
    }
  })

  test('only an Admin invites an Admin: a non-Admin holding invites:write gets 403 permission_required', async () => {
    const inviter = await role(['invites:write'])
    const u = await signup(server, t.slug)
    assert.equal(
      (await call('PUT', `users/${u.user.id}/roles`, { roles: [inviter.name] })).status,
      200,
    )
    const token = u.accessToken as string
    await unchanged(server, t.tenantId, async () => {
      const res = await call(
        'POST',
        'invites',
        { email: uniqueEmail('boss'), role: 'Admin' },
        token,
      )
      expectError(res, 403, 'permission_required')
    })
    // A role the inviter holds in full is the inviter's to give.
    const ok = await call(
      'POST',
      'invites',
      { email: uniqueEmail('peer'), sendEmail: false, roles: [inviter.name] },
      token,
    )
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test('no escalation by invitation: a role with a permission the inviter lacks is 403 permission_required, nothing created', async () => {
    const inviter = await role(['invites:write'])
    const stronger = await role(['invites:write', 'tenant:write'])
    const u = await signup(server, t.slug)
    assert.equal(
      (await call('PUT', `users/${u.user.id}/roles`, { roles: [inviter.name] })).status,
      200,
    )
    const token = u.accessToken as string
    await unchanged(server, t.tenantId, async () => {
      const res = await call(
        'POST',
        'invites',
        { email: uniqueEmail('self'), sendEmail: false, roles: [stronger.name] },
        token,
      )
      expectError(res, 403, 'permission_required')
      assert.equal(res.body.details.permission, 'tenant:write')
    })
  })
})
