// POST me/export (CONTRACT §9): everything held about the signed-in user, no secret, the
// user's events only, audited, rate-limited, user tokens only.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { richUser, sidOf } from '../../../test/fixtures/privacy.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { auditEvents, identities } from '../../db/schema.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { EXPORT_EVENT_CAP } from './export.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx, {
    limits: { ...GENEROUS_LIMITS, dataExports: { points: 3, seconds: 3600 } },
  })
  t = await createTenant(server)
})

const exportData = (token?: string, slug = t.slug, options: { raw?: string } = {}) =>
  server.request('POST', `/v1/${slug}/me/export`, undefined, { token, ...options })

test('export: the user, its sessions, identities, passkeys, recovery codes left and events', async () => {
  const u = await richUser(server, t.slug, t.tenantId)
  const mark = await auditMark(server, t.tenantId)
  const res = await exportData(u.accessToken)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const body = res.body
  assert.deepEqual(Object.keys(body).sort(), [
    'auditEvents',
    'identities',
    'passkeys',
    'recoveryCodesRemaining',
    'sessions',
    'user',
  ])
  assert.equal(body.user.id, u.userId)
  assert.equal(body.user.email, u.email)
  assert.equal(body.user.totpEnrolled, true)

  // Both sessions, newest first; the refreshed one shows where it was last used.
  assert.equal(body.sessions.length, 2)
  const [newest, oldest] = body.sessions
  assert.equal(newest.id, sidOf(u.second.accessToken))
  assert.equal(oldest.id, sidOf(u.accessToken))
  assert.deepEqual(Object.keys(newest).sort(), [
    'createdAt',
    'expiresAt',
    'id',
    'ip',
    'lastUsedAt',
    'revokedAt',
    'signInIp',
    'signInUserAgent',
    'userAgent',
  ])
  assert.equal(newest.signInIp, '192.0.2.77')
  assert.equal(newest.signInUserAgent, 'Firefox/128.0 (X11; Linux x86_64)')
  assert.equal(newest.ip, '198.51.100.8')
  assert.equal(newest.userAgent, 'Safari/17.0 (Macintosh)')
  assert.equal(newest.revokedAt, null)
  assert.equal(Date.parse(newest.lastUsedAt) - Date.parse(newest.createdAt), 60_000)
  assert.equal(oldest.lastUsedAt, oldest.createdAt)

  assert.deepEqual(body.identities, [
    {
      issuer: 'https://idp.example',
      subject: `sub-${u.userId}`,
      email: u.email,
      createdAt: body.identities[0].createdAt,
    },
  ])
  assert.deepEqual(body.passkeys, [
    {
      id: u.passkeyId,
      name: 'Laptop',
      deviceType: 'multiDevice',
      backedUp: true,
      createdAt: body.passkeys[0].createdAt,
      lastUsedAt: null,
    },
  ])
  // The ten the TOTP enrolment made (CONTRACT §9), and the fixture's four, one used.
  assert.equal(body.recoveryCodesRemaining, 13)
  assert.equal(res.headers.get('x-export-truncated'), null)

  // The user's events, in the audit log's shape, this export's request among them.
  const actions = body.auditEvents.map((e: { action: string }) => e.action)
  for (const action of ['UserSignup', 'SessionCreated', 'MfaTotpEnrolled', 'GdprExportRequested']) {
    assert.ok(actions.includes(action), `${action} in ${actions}`)
  }
  for (const e of body.auditEvents) {
    assert.ok(e.userId === u.userId || e.actorId === u.userId, JSON.stringify(e))
    assert.deepEqual(Object.keys(e).sort(), [
      'action',
      'actorId',
      'actorType',
      'createdAt',
      'id',
      'ip',
      'metadata',
      'userAgent',
      'userId',
    ])
  }

  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => e.action),
    ['GdprExportCompleted', 'GdprExportRequested'],
  )
  for (const e of events) {
    assert.equal(e.userId, u.userId)
    assert.equal(e.actorType, 'user')
    assert.equal(e.actorId, u.userId)
  }
})

test("export: an identity at an SSO connection names its connection and the issuer (OIDC) or entity id (SAML) of its IdP, after the identity provider's (CONTRACT §12)", async () => {
  const u = await richUser(server, t.slug, t.tenantId)
  const connection = async (body: Record<string, unknown>) => {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/sso-connections`,
      { domains: [`${crypto.randomUUID()}.example.com`], ...body },
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body.connection.id as string
  }
  const oidc = await connection({
    name: 'Okta',
    type: 'oidc',
    oidc: { issuer: 'https://corp.okta.example.com', clientId: 'abc', clientSecret: 'sekrit' },
  })
  const certificate = readFileSync(
    new URL('../../../test/fixtures/sso/idp-signing.pem', import.meta.url),
    'utf8',
  )
  const saml = await connection({
    name: 'Entra',
    type: 'saml',
    saml: {
      idpEntityId: 'https://sts.example.net/abc/',
      idpSsoUrl: 'https://login.example.net/abc/saml2',
      idpCertificates: [certificate.trim()],
    },
  })
  // Stored as an SSO sign-in links them (federation/sso-signin.ts), the SAML one first.
  const now = server.clock.now()
  const later = new Date(now.getTime() + 1000)
  await server.deps.db.insert(identities).values([
    {
      tenantId: t.tenantId,
      kind: 'sso',
      source: saml,
      subject: 'name-id-1',
      userId: u.userId,
      email: u.email,
      createdAt: now,
    },
    {
      tenantId: t.tenantId,
      kind: 'sso',
      source: oidc,
      subject: 'sub-1',
      userId: u.userId,
      email: null,
      createdAt: later,
    },
  ])
  const res = await exportData(u.accessToken)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.identities, [
    {
      issuer: 'https://idp.example',
      subject: `sub-${u.userId}`,
      email: u.email,
      createdAt: res.body.identities[0].createdAt,
    },
    {
      issuer: 'https://sts.example.net/abc/',
      connectionId: saml,
      subject: 'name-id-1',
      email: u.email,
      createdAt: now.toISOString(),
    },
    {
      issuer: 'https://corp.okta.example.com',
      connectionId: oidc,
      subject: 'sub-1',
      email: null,
      createdAt: later.toISOString(),
    },
  ])
})

test('export: no hash, secret, token or code of the user leaves the service', async () => {
  const u = await richUser(server, t.slug, t.tenantId)
  const res = await exportData(u.accessToken)
  assert.equal(res.status, 200)
  const text = JSON.stringify(res.body)
  for (const secret of u.secrets) {
    assert.ok(secret.length >= 8)
    assert.equal(text.includes(secret), false, `the export holds a secret: ${secret.slice(0, 12)}…`)
  }
  assert.doesNotMatch(text, /\$argon2/)
  assert.doesNotMatch(text, /passwordHash|totpSecret|codeHash|tokenHash|publicKey|credentialId/)
})

test("export: another user's events and data are not in it; an admin's own acts are", async () => {
  const other = await createTenant(server)
  const a = await signup(server, t.slug)
  const b = await signup(server, t.slug)
  const invitee = uniqueEmail('invitee')
  const invited = await server.request(
    'POST',
    `/v1/${other.slug}/invites`,
    { email: invitee, sendEmail: false },
    { token: other.admin.accessToken },
  )
  assert.equal(invited.status, 200)

  const mine = (await exportData(a.accessToken)).body
  assert.equal(JSON.stringify(mine).includes(b.user.id), false)
  assert.equal(JSON.stringify(mine).includes(b.email), false)
  assert.equal(mine.sessions.length, 1)
  assert.deepEqual(mine.identities, [])
  assert.deepEqual(mine.passkeys, [])
  assert.equal(mine.recoveryCodesRemaining, 0)

  // The admin made the invitation: an event it acted in, though about nobody's account.
  const admin = (await exportData(other.admin.accessToken, other.slug)).body
  const created = admin.auditEvents.find((e: { action: string }) => e.action === 'InviteCreated')
  assert.ok(created)
  assert.equal(created.actorId, other.admin.user.id)
  assert.equal(admin.user.tenantId, other.tenantId)
})

test('export: the newest 10,000 events, and a header says the rest was left out', async () => {
  const u = await signup(server, t.slug)
  const start = server.clock.now().getTime() - 86_400_000
  const rows = Array.from({ length: EXPORT_EVENT_CAP }, (_, i) => ({
    tenantId: t.tenantId,
    id: uuidv7(start + i),
    action: 'UserLogin',
    actorType: 'user',
    actorId: u.user.id,
    userId: u.user.id,
    metadata: { n: i },
    createdAt: new Date(start + i),
  }))
  for (let i = 0; i < rows.length; i += 2000) {
    await server.deps.db.insert(auditEvents).values(rows.slice(i, i + 2000))
  }
  const res = await exportData(u.accessToken)
  assert.equal(res.status, 200)
  assert.equal(res.body.auditEvents.length, EXPORT_EVENT_CAP)
  assert.equal(res.headers.get('x-export-truncated'), 'auditEvents')
  // Newest first: the export's own request leads, the oldest seeded events are cut.
  assert.equal(res.body.auditEvents[0].action, 'GdprExportRequested')
  const seeded = res.body.auditEvents.filter((e: { action: string }) => e.action === 'UserLogin')
  assert.ok(!seeded.some((e: { metadata: { n: number } }) => e.metadata.n === 0))
})

test('export: an API key, no token, a foreign token: 401 and nothing recorded', async () => {
  const other = await createTenant(server)
  const key = await insertApiKey(server, t.tenantId)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    expectError(await exportData(key), 401, 'user_token_required')
    expectError(await exportData(undefined), 401, 'token_missing')
    expectError(await exportData('not-a-token'), 401, 'token_invalid')
    expectError(await exportData(other.admin.accessToken), 401, 'token_invalid')
  })
})

test('export: an unknown tenant is 404; a body is not read, malformed JSON is 400; nothing changes', async () => {
  const u = await signup(server, t.slug)
  await unchanged(server, t.tenantId, async () => {
    expectError(await exportData(u.accessToken, 'no-such-tenant'), 404, 'tenant_not_found')
    expectError(await exportData(u.accessToken, t.slug, { raw: '{"x":' }), 400, 'malformed_json')
  })
})

test('export: a signed-out session and a deleted account are refused', async () => {
  const u = await signup(server, t.slug)
  const v = await signup(server, t.slug)
  await server.request('POST', `/v1/${t.slug}/auth/logout`, { refreshToken: u.refreshToken })
  await server.request('DELETE', `/v1/${t.slug}/me`, undefined, { token: v.accessToken })
  await unchanged(server, t.tenantId, async () => {
    expectError(await exportData(u.accessToken), 401, 'session_revoked')
    expectError(await exportData(v.accessToken), 401, 'session_revoked')
  })
})

test('export rate limit: a few per hour per user, then 429 with Retry-After, nothing recorded', async () => {
  const u = await signup(server, t.slug)
  const other = await signup(server, t.slug)
  for (let i = 0; i < 3; i++) assert.equal((await exportData(u.accessToken)).status, 200)
  await unchanged(server, t.tenantId, async () => {
    expectError(await exportData(u.accessToken), 429, 'rate_limited')
  })
  // Another user's budget is its own.
  assert.equal((await exportData(other.accessToken)).status, 200)
})
