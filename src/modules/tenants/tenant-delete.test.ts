// DELETE tenant (CONTRACT §9): an Admin closes the workspace with its slug and its password
// (or a login code): every route 404 at once, invitations 401, sessions ended, the slug
// still taken, no restore.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  auditRows,
  codeRows,
  setTenant,
  setUser,
  tenantBySlug,
  tenantSnapshot,
  unchanged,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { b64, png } from '../../../test/fixtures/logos.ts'
import { mailedLoginCode, otherCode } from '../../../test/fixtures/passwordless.ts'
import { sidOf } from '../../../test/fixtures/privacy.ts'
import {
  createTenant,
  eventually,
  GENEROUS_LIMITS,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startSecondInstance,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { and, eq, isNull } from '../../db/orm.ts'
import { sessions } from '../../db/schema.ts'

let sink: SmtpSink
let server: TestServer
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, {
    smtpUrl: sink.url,
    limits: { ...GENEROUS_LIMITS, loginFailures: { points: 3, seconds: 900 } },
  })
})
after(() => sink.stop())

const del = (t: TenantFixture, body: unknown, token?: string, ip?: string) =>
  server.request('DELETE', `/v1/${t.slug}/tenant`, body, { token, ip })
const confirm = (t: TenantFixture, extra: Record<string, unknown> = {}) => ({
  confirmSlug: t.slug,
  password: t.adminPassword,
  ...extra,
})

async function liveSessions(tenantId: string) {
  const rows = await server.deps.db
    .select()
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), isNull(sessions.revokedAt)))
  return rows.length
}

test('DELETE tenant: every route answers 404 at once, invitations 401, sessions end, the slug stays taken', async () => {
  const t = await createTenant(server)
  const other = await createTenant(server)
  const member = await signup(server, t.slug)
  const key = await insertApiKey(server, t.tenantId)
  const logo = await server.request(
    'PUT',
    `/v1/${t.slug}/tenant/logo`,
    { mimeType: 'image/png', data: b64(png()) },
    { token: key },
  )
  assert.equal(logo.status, 200)
  const invited = await server.request(
    'POST',
    `/v1/${t.slug}/invites`,
    { email: uniqueEmail('invitee'), sendEmail: false },
    { token: key },
  )
  assert.equal(invited.status, 200)
  // Warm this instance's tenant cache, as live traffic would.
  assert.equal((await server.request('GET', `/v1/${t.slug}/auth/config`)).status, 200)
  const otherBefore = await tenantSnapshot(server, other.tenantId)

  const res = await del(t, confirm(t), t.admin.accessToken)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, { ok: true })

  const row = await tenantBySlug(server, t.slug)
  assert.ok(row.deletedAt instanceof Date)
  assert.equal(await liveSessions(t.tenantId), 0)
  assert.ok(server.deps.revocations.has(sidOf(member.accessToken)))

  const notFound = async (method: string, path: string, body?: unknown, token?: string) =>
    expectError(
      await server.request(method, `/v1/${t.slug}${path}`, body, { token }),
      404,
      'tenant_not_found',
    )
  await notFound('GET', '/auth/config')
  await notFound('POST', '/auth/login', { email: member.email, password: STRONG_PASSWORD })
  await notFound('POST', '/auth/signup', { email: uniqueEmail(), password: STRONG_PASSWORD })
  await notFound('POST', '/auth/refresh', { refreshToken: member.refreshToken })
  await notFound('GET', '/me', undefined, member.accessToken)
  await notFound('GET', '/tenant', undefined, key)
  await notFound('GET', '/users', undefined, t.admin.accessToken)
  await notFound('GET', '/audit', undefined, key)
  await notFound('GET', '/logo')
  await notFound('POST', '/oauth/introspect', { token: member.accessToken }, key)
  await notFound('DELETE', '/tenant', confirm(t), t.admin.accessToken)
  expectError(
    await server.request('POST', '/v1/invites/accept', {
      token: invited.body.token,
      password: STRONG_PASSWORD,
    }),
    401,
    'invalid_invite',
  )
  // The slug stays taken until the purge.
  expectError(
    await server.request('POST', '/v1/tenants', {
      tenant: { slug: t.slug, name: 'Squatter' },
      admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
    }),
    409,
    'slug_taken',
  )

  const [event] = await auditRows(server, t.tenantId, 'TenantSoftDeleted')
  assert.equal(event.actorType, 'user')
  assert.equal(event.actorId, t.admin.user.id)
  assert.deepEqual(event.metadata, {
    slug: t.slug,
    sessionsEnded: 2,
    confirmedWith: 'password',
  })
  assert.deepEqual(await tenantSnapshot(server, other.tenantId), otherBefore)
  assert.equal((await server.request('GET', `/v1/${other.slug}/auth/config`)).status, 200)
})

test('DELETE tenant: another instance answers 404 within its 2-second cache, and refuses the tokens', async () => {
  const t = await createTenant(server)
  const member = await signup(server, t.slug)
  const b = await startSecondInstance(server)
  try {
    const me = () => b.request('GET', `/v1/${t.slug}/me`, undefined, { token: member.accessToken })
    assert.equal((await me()).status, 200)
    assert.equal((await del(t, confirm(t), t.admin.accessToken)).status, 200)
    assert.ok(await eventually(async () => b.deps.revocations.has(sidOf(member.accessToken))))
    assert.ok(await eventually(async () => (await me()).status === 404, 3000))
    expectError(await me(), 404, 'tenant_not_found')
  } finally {
    await b.close()
  }
})

test('DELETE tenant: confirmSlug must be the slug; bad bodies are 400; nothing changes', async () => {
  const t = await createTenant(server)
  const other = await createTenant(server)
  const token = t.admin.accessToken
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    expectValidation(
      await del(t, confirm(t, { confirmSlug: other.slug }), token),
      'body.confirmSlug',
    )
    expectValidation(await del(t, confirm(t, { confirmSlug: t.slug.toUpperCase() }), token))
    expectValidation(await del(t, { confirmSlug: t.slug }, token))
    expectValidation(await del(t, { password: t.adminPassword }, token))
    expectValidation(await del(t, confirm(t, { code: '123456' }), token))
    expectValidation(await del(t, confirm(t, { confirmSlug: 42 }), token))
    expectValidation(await del(t, confirm(t, { password: ['x'] }), token))
    expectValidation(await del(t, { confirmSlug: t.slug, code: '12345a' }, token))
    expectValidation(await del(t, confirm(t, { confirmSlug: 'x'.repeat(64) }), token))
    expectValidation(await del(t, confirm(t, { password: 'p'.repeat(1025) }), token))
    expectValidation(await del(t, undefined, token))
    expectValidation(await del(t, [], token))
    expectError(
      await server.request('DELETE', `/v1/${t.slug}/tenant`, undefined, {
        token,
        raw: '{"confirmSlug":',
      }),
      400,
      'malformed_json',
    )
  })
  assert.equal((await server.request('GET', `/v1/${t.slug}/auth/config`)).status, 200)
})

test('DELETE tenant: an API key 403 api_key_not_allowed, a Member 403 admin_required, foreign tokens 401', async () => {
  const t = await createTenant(server)
  const other = await createTenant(server)
  const member = await signup(server, t.slug)
  const key = await insertApiKey(server, t.tenantId)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    expectError(await del(t, confirm(t), key), 403, 'api_key_not_allowed')
    expectError(
      await del(t, confirm(t, { password: member.password }), member.accessToken),
      403,
      'admin_required',
    )
    expectError(await del(t, confirm(t), other.admin.accessToken), 401, 'token_invalid')
    expectError(await del(t, confirm(t)), 401, 'token_missing')
  })
})

test('DELETE tenant: a wrong password is 401 invalid_credentials, recorded, and counts like a failed login', async () => {
  const t = await createTenant(server)
  const ip = randomIp()
  const before = await tenantSnapshot(server, t.tenantId, { audit: false })
  for (let i = 0; i < 3; i++) {
    expectError(
      await del(t, confirm(t, { password: 'wrong-password-1' }), t.admin.accessToken, ip),
      401,
      'invalid_credentials',
    )
  }
  assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
  const failed = await auditRows(server, t.tenantId, 'UserLoginFailed')
  assert.equal(failed.length, 3)
  assert.equal(failed[0].userId, t.admin.user.id)
  assert.deepEqual(failed[0].metadata, {
    email: t.adminEmail.toLowerCase(),
    reason: 'invalid_credentials',
    route: 'tenant-delete',
  })
  // The (tenant, email, IP) budget is spent: even the right password waits now, and a
  // password login of the admin from that address too.
  expectError(await del(t, confirm(t), t.admin.accessToken, ip), 429, 'rate_limited')
  expectError(
    await server.request(
      'POST',
      `/v1/${t.slug}/auth/login`,
      { email: t.adminEmail, password: t.adminPassword },
      { ip },
    ),
    429,
    'rate_limited',
  )
  assert.equal((await tenantBySlug(server, t.slug)).deletedAt, null)
  // From another address the right password still closes it.
  assert.equal((await del(t, confirm(t), t.admin.accessToken)).status, 200)
})

test('DELETE tenant: an admin without a password confirms with a login code, spent by the deletion', async () => {
  const t = await createTenant(server)
  await setTenant(server, t.slug, { authPolicy: 'PasswordAndPasswordless' })
  await setUser(server, t.tenantId, t.admin.user.id, { passwordHash: null })
  const code = await mailedLoginCode(server, sink, t.slug, t.adminEmail)

  // A password cannot stand in for it, nor a wrong code (counted against the code).
  expectError(await del(t, confirm(t), t.admin.accessToken), 401, 'invalid_credentials')
  const wrong = { confirmSlug: t.slug, code: otherCode(code) }
  expectError(await del(t, wrong, t.admin.accessToken), 401, 'invalid_code')
  const [open] = await codeRows(server, t.tenantId, t.admin.user.id)
  assert.equal(open.attempts, 1)
  const failed = await auditRows(server, t.tenantId, 'UserLoginFailed')
  assert.deepEqual(
    failed.map((e) => e.metadata.reason),
    ['invalid_credentials', 'invalid_code'],
  )

  const res = await del(t, { confirmSlug: t.slug, code }, t.admin.accessToken)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const [spent] = await codeRows(server, t.tenantId, t.admin.user.id)
  assert.ok(spent.closedAt instanceof Date)
  const [event] = await auditRows(server, t.tenantId, 'TenantSoftDeleted')
  assert.equal(event.metadata.confirmedWith, 'code')
})

test('DELETE tenant: an admin with a password cannot confirm with a code; a code is 6 digits', async () => {
  const t = await createTenant(server)
  await setTenant(server, t.slug, { authPolicy: 'PasswordAndPasswordless' })
  const code = await mailedLoginCode(server, sink, t.slug, t.adminEmail)
  expectError(
    await del(t, { confirmSlug: t.slug, code }, t.admin.accessToken),
    401,
    'invalid_credentials',
  )
  const [open] = await codeRows(server, t.tenantId, t.admin.user.id)
  assert.equal(open.closedAt, null, 'the code was not spent')
  assert.equal((await tenantBySlug(server, t.slug)).deletedAt, null)
})

test('DELETE tenant race: two deletions at once, one succeeds, the other finds no tenant', async () => {
  const t = await createTenant(server)
  const [one, two] = await Promise.all([
    del(t, confirm(t), t.admin.accessToken),
    del(t, confirm(t), t.admin.accessToken),
  ])
  const statuses = [one.status, two.status].sort()
  assert.deepEqual(statuses, [200, 404])
  expectError(one.status === 404 ? one : two, 404, 'tenant_not_found')
  assert.equal((await auditRows(server, t.tenantId, 'TenantSoftDeleted')).length, 1)
})
