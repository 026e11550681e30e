// GET /me, DELETE /me and PATCH /me/password (SPEC, Current user; CONTRACT §2, §4).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import {
  auditMark,
  auditSince,
  sessionRows,
  setUser,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { tenantLogos } from '../../db/schema.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server, { name: 'Lantern Works' })
})

const NEW_PASSWORD = 'violet-harbour-engine-31'

const me = (token?: string, slug = t.slug) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })
const deleteMe = (token?: string, slug = t.slug) =>
  server.request('DELETE', `/v1/${slug}/me`, undefined, { token })
const changePassword = (token: string | undefined, body: unknown, slug = t.slug) =>
  server.request('PATCH', `/v1/${slug}/me/password`, body, { token })
const login = (email: string, password: string, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/auth/login`, { email, password })
const refresh = (refreshToken: string, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/auth/refresh`, { refreshToken })
const sid = (accessToken: string) =>
  JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8')).sid as string

describe('GET /me', () => {
  test('answers the user with its tenant', async () => {
    const u = await signup(server, t.slug)
    const res = await me(u.accessToken)
    assert.equal(res.status, 200)
    assert.deepEqual(Object.keys(res.body).sort(), [
      'createdAt',
      'displayName',
      'email',
      'emailVerified',
      'externalId',
      'familyName',
      'givenName',
      'hasPassword',
      'id',
      'lastLoginAt',
      'locale',
      'lockedUntil',
      'passwordBreached',
      'permissions',
      'role',
      'roles',
      'status',
      'tenant',
      'tenantId',
      'totpEnrolled',
    ])
    assert.equal(res.body.id, u.user.id)
    assert.equal(res.body.tenantId, t.tenantId)
    assert.equal(res.body.email, u.email)
    assert.equal(res.body.status, 'Active')
    assert.equal(res.body.role, 'Member')
    assert.equal(res.body.totpEnrolled, false)
    assert.equal(res.body.emailVerified, false)
    assert.equal(res.body.hasPassword, true)
    assert.equal(res.body.lastLoginAt, null, 'null until the first login')
    assert.equal(res.body.createdAt, u.user.createdAt)
    assert.deepEqual(res.body.tenant, {
      id: t.tenantId,
      slug: t.slug,
      name: 'Lantern Works',
      plan: 'Free',
      mfaPolicy: 'Disabled',
      authPolicy: 'PasswordOnly',
      logoUrl: '',
    })

    const again = await login(u.email, u.password)
    const after = await me(again.body.accessToken)
    assert.equal(after.body.lastLoginAt, again.body.user.lastLoginAt)
    assert.ok(after.body.lastLoginAt)
  })

  test('shows the logo URL once the tenant has a logo', async () => {
    const withLogo = await createTenant(server)
    await server.deps.db.insert(tenantLogos).values({
      tenantId: withLogo.tenantId,
      mimeType: 'image/png',
      data: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      etag: '"x"',
      updatedAt: new Date(),
    })
    const res = await me(withLogo.admin.accessToken, withLogo.slug)
    assert.equal(res.status, 200)
    assert.equal(res.body.tenant.logoUrl, `http://auth.test/v1/${withLogo.slug}/logo`)
  })

  test('shows role changes made after the token was issued', async () => {
    const u = await signup(server, t.slug)
    await setUser(server, t.tenantId, u.user.id, { role: 'Admin', emailVerified: true })
    const res = await me(u.accessToken)
    assert.equal(res.body.role, 'Admin')
    assert.equal(res.body.emailVerified, true)
  })

  test('never shows the password hash or any secret', async () => {
    const u = await signup(server, t.slug)
    const text = JSON.stringify((await me(u.accessToken)).body)
    assert.doesNotMatch(text, /argon2|passwordHash|"password"|totpSecret/i)
  })

  test('needs a bearer token of this tenant', async () => {
    expectError(await me(), 401, 'token_missing')
    expectError(await me('not-a-token'), 401, 'token_invalid')
    const other = await createTenant(server)
    expectError(await me(other.admin.accessToken), 401, 'token_invalid')
    expectError(await me(t.admin.accessToken, 'no-such-tenant'), 404, 'tenant_not_found')
  })
})

describe('DELETE /me', () => {
  test('soft-deletes the account and ends every session', async () => {
    const u = await signup(server, t.slug)
    const second = (await login(u.email, u.password)).body
    const mark = await auditMark(server, t.tenantId)
    const res = await deleteMe(u.accessToken)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionRevoked', 'SessionRevoked', 'UserSoftDeleted'],
    )
    const deleted = events.find((e) => e.action === 'UserSoftDeleted')!
    assert.equal(deleted.userId, u.user.id)
    assert.equal(deleted.actorId, u.user.id)
    assert.equal(deleted.email, u.email)

    // Revocation reaches both sessions' access tokens and refresh tokens.
    for (const s of [u, second]) {
      expectError(await me(s.accessToken), 401, 'session_revoked')
      assert.equal((await refresh(s.refreshToken)).status, 401)
    }
    expectError(await login(u.email, u.password), 401, 'invalid_credentials')

    const row = await userByEmail(server, t.tenantId, u.email)
    assert.ok(row?.deletedAt, 'the row is kept, marked deleted')
    const sessions = await sessionRows(server, t.tenantId, u.user.id)
    assert.equal(sessions.length, 2)
    for (const s of sessions) {
      assert.ok(s.revokedAt)
      assert.equal(s.revokeReason, 'user-deleted')
    }

    // The address is free again.
    const back = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: u.email,
      password: NEW_PASSWORD,
    })
    assert.equal(back.status, 200)
    assert.notEqual(back.body.user.id, u.user.id)
    // The old token does not reach the new account.
    expectError(await me(u.accessToken), 401, 'session_revoked')
  })

  test('rule: the last Admin cannot delete itself (403 last_admin)', async () => {
    const fresh = await createTenant(server)
    const before = await tenantSnapshot(server, fresh.tenantId)
    const res = await deleteMe(fresh.admin.accessToken, fresh.slug)
    expectError(res, 403, 'last_admin')
    assert.deepEqual(await tenantSnapshot(server, fresh.tenantId), before)
    assert.equal((await me(fresh.admin.accessToken, fresh.slug)).status, 200)
  })

  test('an Admin may delete itself while another active Admin remains', async () => {
    const fresh = await createTenant(server)
    const other = await signup(server, fresh.slug)
    await setUser(server, fresh.tenantId, other.user.id, { role: 'Admin' })
    const res = await deleteMe(fresh.admin.accessToken, fresh.slug)
    assert.equal(res.status, 200)
    // Now the other one is the last.
    expectError(await deleteMe(other.accessToken, fresh.slug), 403, 'last_admin')
  })

  test('a suspended second Admin does not count as a remaining Admin', async () => {
    const fresh = await createTenant(server)
    const other = await signup(server, fresh.slug)
    await setUser(server, fresh.tenantId, other.user.id, { role: 'Admin', status: 'Suspended' })
    expectError(await deleteMe(fresh.admin.accessToken, fresh.slug), 403, 'last_admin')
  })

  test('rule: two Admins deleting themselves at once leave one Admin', async () => {
    const fresh = await createTenant(server)
    const other = await signup(server, fresh.slug)
    await setUser(server, fresh.tenantId, other.user.id, { role: 'Admin' })
    const results = await Promise.all([
      deleteMe(fresh.admin.accessToken, fresh.slug),
      deleteMe(other.accessToken, fresh.slug),
    ])
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 403])
    const live = (await tenantSnapshot(server, fresh.tenantId)).users.filter((u) => !u.deletedAt)
    assert.equal(live.length, 1)
    assert.equal(live[0].role, 'Admin')
  })

  test('needs a live user token; refused requests delete nothing', async () => {
    const u = await signup(server, t.slug)
    const other = await createTenant(server)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await deleteMe(), 401, 'token_missing')
    expectError(await deleteMe('x.y.z'), 401, 'token_invalid')
    expectError(await deleteMe(other.admin.accessToken), 401, 'token_invalid')
    expectError(await deleteMe(u.accessToken, 'no-such-tenant'), 404, 'tenant_not_found')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    assert.equal((await me(u.accessToken)).status, 200)
  })

  test('a deleted account cannot delete again', async () => {
    const u = await signup(server, t.slug)
    assert.equal((await deleteMe(u.accessToken)).status, 200)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await deleteMe(u.accessToken), 401, 'session_revoked')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

describe('PATCH /me/password', () => {
  test('changes the password, keeps this session and ends the others', async () => {
    const u = await signup(server, t.slug)
    const second = (await login(u.email, u.password)).body
    const third = (await login(u.email, u.password)).body
    const mark = await auditMark(server, t.tenantId)

    const res = await changePassword(u.accessToken, {
      currentPassword: u.password,
      newPassword: NEW_PASSWORD,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true })
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['SessionRevoked', 'SessionRevoked', 'UserPasswordChanged'],
    )
    assert.deepEqual(
      events
        .filter((e) => e.action === 'SessionRevoked')
        .map((e) => e.metadata.sessionId)
        .sort(),
      [sid(second.accessToken), sid(third.accessToken)].sort(),
    )
    const event = events.find((e) => e.action === 'UserPasswordChanged')!
    assert.equal(event.userId, u.user.id)
    assert.deepEqual(event.metadata, { sessionsEnded: 2 })
    assert.ok(!JSON.stringify(events).includes(NEW_PASSWORD), 'no password in the audit log')
    assert.ok(!JSON.stringify(events).includes(u.password), 'no password in the audit log')

    // The current session lives on, access and refresh token alike.
    assert.equal((await me(u.accessToken)).status, 200)
    const rotated = await refresh(u.refreshToken)
    assert.equal(rotated.status, 200)
    // The others end at once.
    for (const s of [second, third]) {
      expectError(await me(s.accessToken), 401, 'session_revoked')
      expectError(await refresh(s.refreshToken), 401, 'session_revoked')
    }
    expectError(await login(u.email, u.password), 401, 'invalid_credentials')
    assert.equal((await login(u.email, NEW_PASSWORD)).status, 200)
  })

  test('the new password is stored as a fresh argon2id hash, NFC-normalised', async () => {
    const u = await signup(server, t.slug)
    const before = (await userByEmail(server, t.tenantId, u.email))?.passwordHash
    const nfd = 'Ça-ira-Noël-Ångström'.normalize('NFD')
    const res = await changePassword(u.accessToken, {
      currentPassword: u.password,
      newPassword: nfd,
    })
    assert.equal(res.status, 200)
    const after = (await userByEmail(server, t.tenantId, u.email))?.passwordHash
    assert.ok(after?.startsWith('$argon2id$v=19$m=19456,t=2,p=1$'))
    assert.notEqual(after, before)
    assert.equal((await login(u.email, nfd.normalize('NFC'))).status, 200)
  })

  test('a wrong current password is 401 invalid_credentials and changes nothing', async () => {
    const u = await signup(server, t.slug)
    const second = (await login(u.email, u.password)).body
    const before = await tenantSnapshot(server, t.tenantId)
    const res = await changePassword(u.accessToken, {
      currentPassword: 'not-my-password',
      newPassword: NEW_PASSWORD,
    })
    expectError(res, 401, 'invalid_credentials')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    assert.equal((await me(second.accessToken)).status, 200, 'other sessions live on')
    assert.equal((await login(u.email, u.password)).status, 200)
  })

  test('rule: a weak new password is 400 password_too_weak and changes nothing', async () => {
    const email = uniqueEmail('weakchange')
    const u = await signup(server, t.slug, email)
    const before = await tenantSnapshot(server, t.tenantId)
    for (const newPassword of [
      'qwerty123456',
      'QAZWSXEDCRFV',
      email,
      email.toUpperCase(),
      'Lantern Works',
    ]) {
      const res = await changePassword(u.accessToken, { currentPassword: u.password, newPassword })
      expectError(res, 400, 'password_too_weak')
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('bad inputs are 400 validation and change nothing', async () => {
    const u = await signup(server, t.slug)
    const cases: [unknown, string][] = [
      [{ newPassword: NEW_PASSWORD }, 'body.currentPassword'],
      [{ currentPassword: u.password }, 'body.newPassword'],
      [{ currentPassword: '', newPassword: NEW_PASSWORD }, 'body.currentPassword'],
      [{ currentPassword: 'c'.repeat(1025), newPassword: NEW_PASSWORD }, 'body.currentPassword'],
      [{ currentPassword: u.password, newPassword: 'eleven-char' }, 'body.newPassword'],
      [{ currentPassword: u.password, newPassword: 'n'.repeat(1025) }, 'body.newPassword'],
      [{ currentPassword: u.password, newPassword: 123456789012345 }, 'body.newPassword'],
      [{ currentPassword: [u.password], newPassword: NEW_PASSWORD }, 'body.currentPassword'],
      [{ currentPassword: u.password, newPassword: null }, 'body.newPassword'],
      [{ currentPassword: u.password, newPassword: { value: NEW_PASSWORD } }, 'body.newPassword'],
    ]
    const before = await tenantSnapshot(server, t.tenantId)
    for (const [body, field] of cases) {
      expectValidation(await changePassword(u.accessToken, body), field)
    }
    expectValidation(await changePassword(u.accessToken, undefined, t.slug), 'body')
    expectError(
      await server.request('PATCH', `/v1/${t.slug}/me/password`, undefined, {
        token: u.accessToken,
        raw: '{"currentPassword":',
      }),
      400,
      'malformed_json',
    )
    expectError(
      await server.request('PATCH', `/v1/${t.slug}/me/password`, undefined, {
        token: u.accessToken,
        raw: 'currentPassword=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      400,
      'unsupported_media_type',
    )
    expectError(
      await changePassword(u.accessToken, {
        currentPassword: u.password,
        newPassword: NEW_PASSWORD,
        pad: 'x'.repeat(70_000),
      }),
      400,
      'body_too_large',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('unknown properties are ignored, never applied', async () => {
    const u = await signup(server, t.slug)
    const res = await changePassword(u.accessToken, {
      currentPassword: u.password,
      newPassword: NEW_PASSWORD,
      role: 'Admin',
      email: 'someone-else@example.com',
    })
    assert.equal(res.status, 200)
    const row = await userByEmail(server, t.tenantId, u.email)
    assert.equal(row?.role, 'Member')
    assert.equal(row?.email, u.email)
  })

  test('needs a live user token of this tenant; refused requests change nothing', async () => {
    const u = await signup(server, t.slug)
    const other = await createTenant(server)
    const body = { currentPassword: u.password, newPassword: NEW_PASSWORD }
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await changePassword(undefined, body), 401, 'token_missing')
    expectError(await changePassword('abc', body), 401, 'token_invalid')
    expectError(await changePassword(other.admin.accessToken, body), 401, 'token_invalid')
    expectError(
      await changePassword(u.accessToken, body, 'no-such-tenant'),
      404,
      'tenant_not_found',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)

    assert.equal(
      (await server.request('POST', `/v1/${t.slug}/auth/logout`, { refreshToken: u.refreshToken }))
        .status,
      200,
    )
    const ended = await tenantSnapshot(server, t.tenantId)
    expectError(await changePassword(u.accessToken, body), 401, 'session_revoked')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), ended)
  })
})
