// PATCH users/{userId} (role, suspend, reactivate: CONTRACT §2) and POST
// users/{userId}/totp/disable (SPEC, Administration; CONTRACT §4 revocation).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import {
  actionsSince,
  auditMark,
  auditSince,
  setUser,
  unchanged,
  userRow,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { PUBLIC_USER_FIELDS, usersAdmin } from '../../../test/fixtures/users.ts'
import { signup, startTestServer, type TestServer } from '../../../test/helpers.ts'
import { uuidv7 } from '../../lib/ids.ts'

let server: TestServer
let h: ReturnType<typeof usersAdmin>
before(async (t) => {
  server = await startTestServer(t)
  h = usersAdmin(server)
})

test('PATCH user: promoting a Member opens the admin routes; demoting closes them at once', async () => {
  const { t, admin, member } = await h.setup()
  expectError(await h.list(t, '', member.accessToken), 403, 'admin_required')
  const mark = await auditMark(server, t.tenantId)
  const up = await h.patch(t, member.user.id, { role: 'Admin' }, admin)
  assert.equal(up.status, 200)
  assert.deepEqual(Object.keys(up.body).sort(), PUBLIC_USER_FIELDS)
  assert.equal(up.body.role, 'Admin')
  assert.equal(up.body.status, 'Active')
  assert.equal((await h.list(t, '', member.accessToken)).status, 200)
  const [event] = await auditSince(server, t.tenantId, mark)
  assert.equal(event.action, 'UserUpdated')
  assert.equal(event.userId, member.user.id)
  assert.deepEqual(event.metadata, {
    fields: ['role'],
    changes: { role: { from: 'Member', to: 'Admin' } },
  })

  const down = await h.patch(t, member.user.id, { role: 'Member' }, admin)
  assert.equal(down.status, 200)
  assert.equal(down.body.role, 'Member')
  // The same access token, whose claim still says Admin, no longer opens admin routes.
  expectError(await h.list(t, '', member.accessToken), 403, 'admin_required')
})

test('PATCH user: suspending ends the sessions; sign-in answers account_suspended; reactivating restores it', async () => {
  const { t, admin, member } = await h.setup()
  const mark = await auditMark(server, t.tenantId)
  const res = await h.patch(t, member.user.id, { status: 'Suspended' }, admin)
  assert.equal(res.status, 200)
  assert.equal(res.body.status, 'Suspended')
  assert.equal(await h.liveSessions(t.tenantId, member.user.id), 0)
  expectError(await h.me(t, member.accessToken), 401, 'session_revoked')
  const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
    refreshToken: member.refreshToken,
  })
  assert.equal(refreshed.status, 401)
  expectError(await h.login(t, member.email), 401, 'account_suspended')
  expectError(await h.login(t, member.email, 'wrong-password-here'), 401, 'invalid_credentials')
  const events = await auditSince(server, t.tenantId, mark)
  const updated = events.find((e) => e.action === 'UserUpdated')
  assert.deepEqual(updated?.metadata, {
    fields: ['status'],
    changes: { status: { from: 'Active', to: 'Suspended' } },
  })
  assert.ok(events.some((e) => e.action === 'SessionRevoked'))

  const back = await h.patch(t, member.user.id, { status: 'Active' }, admin)
  assert.equal(back.status, 200)
  assert.equal(back.body.status, 'Active')
  assert.equal((await h.login(t, member.email)).status, 200)
})

test('PATCH user: role and status together, recorded as one UserUpdated', async () => {
  const { t, admin, member } = await h.setup()
  const mark = await auditMark(server, t.tenantId)
  const res = await h.patch(t, member.user.id, { role: 'Admin', status: 'Suspended' }, admin)
  assert.equal(res.status, 200)
  const row = await userRow(server, t.tenantId, member.user.id)
  assert.equal(row?.role, 'Admin')
  assert.equal(row?.status, 'Suspended')
  const updated = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'UserUpdated',
  )
  assert.equal(updated.length, 1)
  assert.deepEqual(updated[0].metadata, {
    fields: ['role', 'status'],
    changes: {
      role: { from: 'Member', to: 'Admin' },
      status: { from: 'Active', to: 'Suspended' },
    },
  })
})

test('PATCH user with nothing new answers the user and records nothing', async () => {
  const { t, admin, member } = await h.setup()
  await unchanged(server, [t.tenantId], async () => {
    const same = await h.patch(t, member.user.id, { role: 'Member', status: 'Active' }, admin)
    assert.equal(same.status, 200)
    assert.equal(same.body.id, member.user.id)
    const empty = await h.patch(t, member.user.id, {}, admin)
    assert.equal(empty.status, 200)
    assert.equal(empty.body.role, 'Member')
  })
})

test('last admin: the only active Admin can be neither demoted nor suspended', async () => {
  const { t, admin, adminId, member } = await h.setup()
  const key = await insertApiKey(server, t.tenantId)
  await unchanged(server, [t.tenantId], async () => {
    expectError(await h.patch(t, adminId, { role: 'Member' }, admin), 403, 'last_admin')
    expectError(await h.patch(t, adminId, { status: 'Suspended' }, admin), 403, 'last_admin')
    expectError(await h.patch(t, adminId, { role: 'Member' }, key), 403, 'last_admin')
    expectError(await h.patch(t, adminId, { status: 'Suspended' }, key), 403, 'last_admin')
  })
  // With another admin, the first may step down.
  assert.equal((await h.patch(t, member.user.id, { role: 'Admin' }, admin)).status, 200)
  const down = await h.patch(t, adminId, { role: 'Member' }, admin)
  assert.equal(down.status, 200)
  assert.deepEqual(await h.activeAdmins(t.tenantId), [member.user.id])
})

test('an API key cannot make an Admin: PATCH with role Admin is 403 api_key_not_allowed and changes nothing', async () => {
  const { t, admin, adminId, member } = await h.setup()
  const key = await insertApiKey(server, t.tenantId)
  await unchanged(server, [t.tenantId], async () => {
    for (const body of [
      { role: 'Admin' },
      { role: 'Admin', status: 'Active' },
      { role: 'Admin', status: 'Suspended' },
    ]) {
      expectError(await h.patch(t, member.user.id, body, key), 403, 'api_key_not_allowed')
    }
    // Even where nothing would change: any body that sets role Admin is refused.
    expectError(await h.patch(t, adminId, { role: 'Admin' }, key), 403, 'api_key_not_allowed')
  })
  const row = await userRow(server, t.tenantId, member.user.id)
  assert.equal(row?.role, 'Member')
  expectError(await h.list(t, '', member.accessToken), 403, 'admin_required')
  // An Admin's own token still may.
  assert.equal((await h.patch(t, member.user.id, { role: 'Admin' }, admin)).status, 200)
})

test('an API key still manages members: suspend, reactivate, demote', async () => {
  const { t, admin, member } = await h.setup()
  const key = await insertApiKey(server, t.tenantId)
  const suspended = await h.patch(t, member.user.id, { status: 'Suspended' }, key)
  assert.equal(suspended.status, 200)
  assert.equal(suspended.body.status, 'Suspended')
  const back = await h.patch(t, member.user.id, { role: 'Member', status: 'Active' }, key)
  assert.equal(back.status, 200)
  assert.equal(back.body.status, 'Active')
  assert.equal((await h.patch(t, member.user.id, { role: 'Admin' }, admin)).status, 200)
  const demoted = await h.patch(t, member.user.id, { role: 'Member' }, key)
  assert.equal(demoted.status, 200)
  assert.equal((await userRow(server, t.tenantId, member.user.id))?.role, 'Member')
})

test('last admin race: parallel demotions of two admins leave one', async () => {
  const { t, adminId, member } = await h.setup()
  const key = await insertApiKey(server, t.tenantId)
  await setUser(server, t.tenantId, member.user.id, { role: 'Admin' })
  const results = await Promise.all([
    h.patch(t, adminId, { role: 'Member' }, key),
    h.patch(t, member.user.id, { status: 'Suspended' }, key),
  ])
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 403])
  assert.equal((await h.activeAdmins(t.tenantId)).length, 1)
})

test('PATCH user refuses bad input with 400 validation and changes nothing', async () => {
  const { t, admin, member } = await h.setup()
  const cases: [unknown, string | undefined][] = [
    [{ role: 'Owner' }, 'body.role'],
    [{ role: 'admin' }, 'body.role'],
    [{ role: 1 }, 'body.role'],
    [{ role: null }, 'body.role'],
    [{ status: 'Pending' }, 'body.status'],
    [{ status: 'Deleted' }, 'body.status'],
    [{ status: true }, 'body.status'],
    [{ role: 'Admin', status: 'Gone' }, 'body.status'],
    [['Admin'], undefined],
    ['Admin', undefined],
  ]
  await unchanged(server, [t.tenantId], async () => {
    for (const [body, path] of cases) {
      expectValidation(await h.patch(t, member.user.id, body, admin), path)
    }
    expectValidation(await h.patch(t, 'not-a-uuid', { role: 'Admin' }, admin), 'params.userId')
    const malformed = await server.request(
      'PATCH',
      `/v1/${t.slug}/users/${member.user.id}`,
      undefined,
      {
        token: admin,
        raw: '{"role":',
      },
    )
    expectError(malformed, 400, 'malformed_json')
  })
})

test('PATCH user: unknown, deleted and foreign ids are 404; a Member 403; foreign credentials 401; nothing changes', async () => {
  const a = await h.setup()
  const b = await h.setup()
  const bKey = await insertApiKey(server, b.t.tenantId)
  const gone = await signup(server, a.t.slug)
  assert.equal((await h.del(a.t, gone.user.id, a.admin)).status, 200)
  await unchanged(server, [a.t.tenantId, b.t.tenantId], async () => {
    expectError(await h.patch(a.t, uuidv7(), { role: 'Admin' }, a.admin), 404, 'not_found')
    expectError(await h.patch(a.t, gone.user.id, { status: 'Active' }, a.admin), 404, 'not_found')
    expectError(await h.patch(a.t, b.member.user.id, { role: 'Admin' }, a.admin), 404, 'not_found')
    expectError(await h.patch(a.t, b.adminId, { status: 'Suspended' }, a.admin), 404, 'not_found')
    expectError(
      await h.patch(a.t, a.adminId, { status: 'Suspended' }, a.member.accessToken),
      403,
      'admin_required',
    )
    expectError(
      await h.patch(a.t, a.member.user.id, { role: 'Admin' }, b.admin),
      401,
      'token_invalid',
    )
    expectError(
      await h.patch(a.t, a.member.user.id, { role: 'Admin' }, bKey),
      401,
      'invalid_api_key',
    )
  })
})

test('PATCH user ignores fields it does not own', async () => {
  const { t, admin, member } = await h.setup()
  const res = await h.patch(
    t,
    member.user.id,
    { role: 'Admin', email: 'taken@evil.example', tenantId: uuidv7(), emailVerified: true },
    admin,
  )
  assert.equal(res.status, 200)
  const row = await userRow(server, t.tenantId, member.user.id)
  assert.equal(row?.role, 'Admin')
  assert.equal(row?.email, member.email)
  assert.equal(row?.emailVerified, false)
})

test('TOTP reset: the secret is removed, MfaTotpDisabled recorded and the user signed out', async () => {
  const { t, admin, member } = await h.setup()
  await h.enrolTotp(t.tenantId, member.user.id)
  const mark = await auditMark(server, t.tenantId)
  const res = await h.resetTotp(t, member.user.id, admin)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { ok: true })
  const row = await userRow(server, t.tenantId, member.user.id)
  assert.equal(row?.totpEnabled, false)
  assert.equal(row?.totpSecretEnc, null)
  assert.equal(row?.totpLastStep, null)
  assert.equal(await h.liveSessions(t.tenantId, member.user.id), 0)
  expectError(await h.me(t, member.accessToken), 401, 'session_revoked')
  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => e.action),
    ['MfaTotpDisabled', 'SessionRevoked'],
  )
  assert.equal(events[0].userId, member.user.id)
  assert.equal(events[0].actorId, t.admin.user.id)
  // Listed as not enrolled.
  const listed = await h.list(t, '', admin)
  const item = listed.body.items.find((u: any) => u.id === member.user.id)
  assert.equal(item.totpEnrolled, false)
})

test('TOTP reset of a user without TOTP succeeds and changes nothing', async () => {
  const { t, admin, member } = await h.setup()
  await unchanged(server, [t.tenantId], async () => {
    const res = await h.resetTotp(t, member.user.id, admin)
    assert.equal(res.status, 200)
  })
  assert.equal((await h.me(t, member.accessToken)).status, 200)
})

test('TOTP reset: also clears a half-finished enrolment', async () => {
  const { t, admin, member } = await h.setup()
  await setUser(server, t.tenantId, member.user.id, {
    totpSecretEnc: server.deps.cipher.encrypt('JBSWY3DPEHPK3PXP', `totp:${member.user.id}`),
  })
  const mark = await auditMark(server, t.tenantId)
  assert.equal((await h.resetTotp(t, member.user.id, admin)).status, 200)
  assert.equal((await userRow(server, t.tenantId, member.user.id))?.totpSecretEnc, null)
  const [event] = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'MfaTotpDisabled',
  )
  assert.equal(event.metadata.wasEnabled, false)
})

test('TOTP reset: unknown, malformed and foreign ids are 404; Members 403; foreign credentials 401; nothing changes', async () => {
  const a = await h.setup()
  const b = await h.setup()
  const bKey = await insertApiKey(server, b.t.tenantId)
  await h.enrolTotp(b.t.tenantId, b.member.user.id)
  await h.enrolTotp(a.t.tenantId, a.member.user.id)
  await unchanged(server, [a.t.tenantId, b.t.tenantId], async () => {
    expectError(await h.resetTotp(a.t, uuidv7(), a.admin), 404, 'not_found')
    expectError(await h.resetTotp(a.t, 'not-a-uuid', a.admin), 404, 'not_found')
    expectError(await h.resetTotp(a.t, b.member.user.id, a.admin), 404, 'not_found')
    expectError(
      await h.resetTotp(a.t, a.member.user.id, a.member.accessToken),
      403,
      'admin_required',
    )
    expectError(await h.resetTotp(a.t, a.member.user.id, b.admin), 401, 'token_invalid')
    expectError(await h.resetTotp(a.t, a.member.user.id, bKey), 401, 'invalid_api_key')
    expectError(await h.resetTotp(a.t, a.member.user.id), 401, 'token_missing')
  })
})

test('TOTP reset with an API key of the tenant', async () => {
  const { t, member } = await h.setup()
  const apiKey = await insertApiKey(server, t.tenantId)
  await h.enrolTotp(t.tenantId, member.user.id)
  const mark = await auditMark(server, t.tenantId)
  assert.equal((await h.resetTotp(t, member.user.id, apiKey)).status, 200)
  const actions = await actionsSince(server, t.tenantId, mark)
  assert.deepEqual(actions, ['MfaTotpDisabled', 'SessionRevoked'])
  const [event] = await auditSince(server, t.tenantId, mark)
  assert.equal(event.actorType, 'apiKey')
  expectError(await h.me(t, member.accessToken), 401, 'session_revoked')
})

describe('the base role rule (CONTRACT §17): who is an Admin stays an Admin’s act', () => {
  /** A tenant, its Admin, a Member, and a second Member holding users:write through a role. */
  async function withWriter() {
    const s = await h.setup()
    const call = (method: string, path: string, body: unknown) =>
      server.request(method, `/v1/${s.t.slug}/${path}`, body, { token: s.admin })
    const role = await call('POST', 'roles', { name: 'User editors', permissions: ['users:write'] })
    assert.equal(role.status, 200, JSON.stringify(role.body))
    const writer = await signup(server, s.t.slug)
    const put = await call('PUT', `users/${writer.user.id}/roles`, { roles: ['User editors'] })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    return { ...s, writer: writer.accessToken as string, call }
  }

  test('a non-Admin holding users:write: making an Admin or demoting one is 403 permission_required, nothing changed', async () => {
    const { t, adminId, member, writer } = await withWriter()
    await setUser(server, t.tenantId, member.user.id, { role: 'Admin' })
    const other = await signup(server, t.slug)
    await unchanged(server, [t.tenantId], async () => {
      expectError(
        await h.patch(t, other.user.id, { role: 'Admin' }, writer),
        403,
        'permission_required',
      )
      expectError(await h.patch(t, adminId, { role: 'Admin' }, writer), 403, 'permission_required')
      for (const body of [{ role: 'Member' }, { role: 'Member', status: 'Suspended' }]) {
        expectError(await h.patch(t, member.user.id, body, writer), 403, 'permission_required')
      }
    })
    assert.equal((await userRow(server, t.tenantId, member.user.id))?.role, 'Admin')
    assert.equal((await userRow(server, t.tenantId, other.user.id))?.role, 'Member')
    // The rest of users:write is the writer's: a Member suspended, and Member kept Member.
    const suspended = await h.patch(
      t,
      other.user.id,
      { role: 'Member', status: 'Suspended' },
      writer,
    )
    assert.equal(suspended.status, 200, JSON.stringify(suspended.body))
    assert.equal(suspended.body.status, 'Suspended')
  })

  test('a key holding only users:write: making or demoting an Admin is 403 api_key_not_allowed, nothing changed', async () => {
    const { t, member, call } = await withWriter()
    const created = await call('POST', 'api-keys', {
      name: 'users only',
      environment: 'live',
      permissions: ['users:write'],
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const key = created.body.plaintext as string
    await setUser(server, t.tenantId, member.user.id, { role: 'Admin' })
    const other = await signup(server, t.slug)
    await unchanged(server, [t.tenantId], async () => {
      expectError(
        await h.patch(t, other.user.id, { role: 'Admin' }, key),
        403,
        'api_key_not_allowed',
      )
      expectError(
        await h.patch(t, member.user.id, { role: 'Member' }, key),
        403,
        'api_key_not_allowed',
      )
    })
    assert.equal((await userRow(server, t.tenantId, member.user.id))?.role, 'Admin')
    const suspended = await h.patch(t, other.user.id, { status: 'Suspended' }, key)
    assert.equal(suspended.status, 200, JSON.stringify(suspended.body))
  })
})
