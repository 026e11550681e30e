// The tenant purge (CONTRACT §9; npm run purge): a workspace closed more than
// USER_RETENTION_DAYS ago goes with every row of every table it owns, other workspaces keep
// every row, and its slug is free again.
//
// Workspaces are closed with the clock moved back and the purge runs at the present, so
// that only this file's workspaces are old enough to go, even on a database other tests
// share.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { b64, png } from '../../../test/fixtures/logos.ts'
import { richUser } from '../../../test/fixtures/privacy.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { purgeTenant } from '../../db/cross-tenant.ts'
import { eq } from '../../db/orm.ts'
import {
  apiResources,
  applications,
  emailConflicts,
  hookCallLog,
  identities,
  oauthStates,
  oidcModels,
  rememberedDevices,
  ssoSamlAssertions,
  tenants,
  webauthnChallenges,
} from '../../db/schema.ts'
import { randomToken } from '../../lib/crypto.ts'
import { purgeTenants } from './purge.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx, { userRetentionDays: 30 })
})

const DAY = 24 * 60 * 60

/** A tenant with rows in every table a tenant owns. */
async function populated(): Promise<TenantFixture> {
  const t = await createTenant(server)
  const u = await richUser(server, t.slug, t.tenantId)
  const key = await insertApiKey(server, t.tenantId)
  // A webhook for every event (CONTRACT §13): the audited changes below, its own creation
  // included, queue its deliveries.
  const hook = await server.request(
    'POST',
    `/v1/${t.slug}/webhooks`,
    { url: 'https://hooks.example.com/in', events: ['*'] },
    { token: key },
  )
  assert.equal(hook.status, 200, JSON.stringify(hook.body))
  // A blocking hook (CONTRACT §21) for an event no step below takes, so nothing calls it.
  const blocking = await server.request(
    'POST',
    `/v1/${t.slug}/hooks`,
    { event: 'before_sign_in', url: 'https://hooks.example.com/sign-in', enabled: false },
    { token: key },
  )
  assert.equal(blocking.status, 200, JSON.stringify(blocking.body))
  // A line of its last calls (issue 32), written directly as the rows below.
  await server.deps.db.insert(hookCallLog).values({
    tenantId: t.tenantId,
    id: crypto.randomUUID(),
    hookId: blocking.body.hook.id,
    at: server.clock.now(),
    outcome: 'allow',
    durationMs: 3,
    status: 200,
    test: true,
  })
  const put = await server.request(
    'PUT',
    `/v1/${t.slug}/tenant/logo`,
    { mimeType: 'image/png', data: b64(png()) },
    { token: key },
  )
  assert.equal(put.status, 200)
  const invited = await server.request(
    'POST',
    `/v1/${t.slug}/invites`,
    { email: uniqueEmail('invitee'), sendEmail: false },
    { token: key },
  )
  assert.equal(invited.status, 200)
  const now = server.clock.now()
  const soon = new Date(now.getTime() + 300_000)
  await server.deps.db.insert(oauthStates).values({
    tenantId: t.tenantId,
    stateHash: randomToken(),
    codeVerifier: 'sealed',
    nonce: randomToken(),
    createdAt: now,
    expiresAt: soon,
  })
  await server.deps.db.insert(webauthnChallenges).values({
    tenantId: t.tenantId,
    challengeHash: randomToken(),
    ceremony: 'registration',
    userId: u.userId,
    createdAt: now,
    expiresAt: soon,
  })
  // The OpenID provider's tables (CONTRACT §11), written directly as the rows above.
  await server.deps.db.insert(applications).values({
    tenantId: t.tenantId,
    id: crypto.randomUUID(),
    clientId: randomToken(),
    name: 'App',
    type: 'machine',
    createdAt: now,
    updatedAt: now,
  })
  await server.deps.db.insert(apiResources).values({
    tenantId: t.tenantId,
    id: crypto.randomUUID(),
    name: 'API',
    identifier: 'https://api.example.com',
    createdAt: now,
    updatedAt: now,
  })
  for (const model of ['Grant', 'AccessToken', 'Session']) {
    await server.deps.db.insert(oidcModels).values({
      tenantId: t.tenantId,
      model,
      id: randomToken(),
      payload: { accountId: u.userId },
      accountId: u.userId,
      expiresAt: soon,
    })
  }
  await server.deps.db.insert(emailConflicts).values({
    tenantId: t.tenantId,
    userId: u.userId,
    emailNormalized: u.email,
    nfc: u.email,
  })
  // An SSO connection with its domain (CONTRACT §12), an identity at it and a SAML
  // assertion id it accepted.
  const sso = await server.request(
    'POST',
    `/v1/${t.slug}/sso-connections`,
    {
      name: 'IdP',
      type: 'oidc',
      domains: [`d${crypto.randomUUID().slice(0, 8)}.example.com`],
      oidc: { issuer: 'https://idp.example.com', clientId: 'c', clientSecret: 's' },
    },
    // The admin's token: an API key cannot create a connection.
    { token: t.admin.accessToken },
  )
  assert.equal(sso.status, 200, JSON.stringify(sso.body))
  const connectionId = sso.body.connection.id
  // A social connection (CONTRACT §19).
  const social = await server.request(
    'POST',
    `/v1/${t.slug}/social-connections`,
    { provider: 'github', clientId: 'c', clientSecret: 's' },
    { token: t.admin.accessToken },
  )
  assert.equal(social.status, 200, JSON.stringify(social.body))
  // A custom role (CONTRACT §17), held by the user.
  const role = await server.request(
    'POST',
    `/v1/${t.slug}/roles`,
    { name: 'Auditor', permissions: ['audit:read'] },
    { token: t.admin.accessToken },
  )
  assert.equal(role.status, 200, JSON.stringify(role.body))
  const held = await server.request(
    'PUT',
    `/v1/${t.slug}/users/${u.userId}/roles`,
    { roles: ['Auditor'] },
    { token: t.admin.accessToken },
  )
  assert.equal(held.status, 200, JSON.stringify(held.body))
  // A group (CONTRACT §17) provisioned by SCIM, the user a member, holding the role.
  const group = await server.request(
    'POST',
    `/scim/v2/${t.slug}/Groups`,
    { displayName: 'Auditors', members: [{ value: u.userId }] },
    { token: key },
  )
  assert.equal(group.status, 201, JSON.stringify(group.body))
  const groupRoles = await server.request(
    'PUT',
    `/v1/${t.slug}/groups/${group.body.id}/roles`,
    { roles: ['Auditor'] },
    { token: t.admin.accessToken },
  )
  assert.equal(groupRoles.status, 200, JSON.stringify(groupRoles.body))
  await server.deps.db.insert(identities).values({
    tenantId: t.tenantId,
    kind: 'sso',
    source: connectionId,
    subject: randomToken(),
    userId: u.userId,
    email: u.email,
    createdAt: now,
  })
  await server.deps.db.insert(ssoSamlAssertions).values({
    tenantId: t.tenantId,
    connectionId,
    assertionId: randomToken(),
    expiresAt: soon,
  })
  // A remembered device (CONTRACT §21), a mail template (§20) and an organization with a
  // JIT domain, the user a member holding an organization role, and an invitation (§18).
  await server.deps.db.insert(rememberedDevices).values({
    tenantId: t.tenantId,
    tokenHash: randomToken(),
    userId: u.userId,
    createdAt: now,
    expiresAt: soon,
  })
  const admin = { token: t.admin.accessToken }
  const ok = async (method: string, path: string, body: unknown) => {
    const res = await server.request(method, `/v1/${t.slug}/${path}`, body, admin)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }
  await ok('PUT', 'email-templates/login_code/en', {
    subject: 'Your code',
    text: 'Your code is {{code}}.',
  })
  await ok('POST', 'roles', { name: 'Org member', kind: 'organization' })
  const { organization } = await ok('POST', 'organizations', {
    name: 'Acme',
    jit: { emailDomains: [`o${crypto.randomUUID().slice(0, 8)}.example.com`], roles: [] },
  })
  await ok('PUT', `organizations/${organization.id}/members/${u.userId}`, {
    roles: ['Org member'],
  })
  await ok('POST', `organizations/${organization.id}/invitations`, {
    email: uniqueEmail('org-invitee'),
    roles: [],
    sendEmail: false,
  })
  // The SSO connection's sign-ins join it (CONTRACT §18): the purge's cascades meet that key.
  await ok('PATCH', `sso-connections/${connectionId}`, { organizationId: organization.id })
  return t
}

async function conflicts(tenantId: string) {
  return server.deps.db.select().from(emailConflicts).where(eq(emailConflicts.tenantId, tenantId))
}

/**
 * Closes the workspace through the API, then dates the closing `daysAgo` days back (an
 * access token cannot be used in the past: its expiry is checked against real time).
 */
async function close(t: TenantFixture, daysAgo: number) {
  const res = await server.request(
    'DELETE',
    `/v1/${t.slug}/tenant`,
    { confirmSlug: t.slug, password: t.adminPassword },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const deletedAt = new Date(server.clock.now().getTime() - daysAgo * DAY * 1000)
  await server.deps.db.update(tenants).set({ deletedAt }).where(eq(tenants.id, t.tenantId))
}

test('purge: a tenant closed past the retention goes with every row; others keep theirs; the slug is free', async () => {
  const doomed = await populated()
  const recent = await populated()
  const kept = await populated()
  // Every table has rows of the doomed tenant: the check below cannot pass by accident.
  for (const [table, rows] of Object.entries(await tenantSnapshot(server, doomed.tenantId))) {
    assert.ok(rows.length > 0, `${table} has rows before the purge`)
  }
  await close(doomed, 31)
  await close(recent, 29)
  const recentBefore = await tenantSnapshot(server, recent.tenantId)
  const keptBefore = await tenantSnapshot(server, kept.tenantId)
  const keptConflicts = await conflicts(kept.tenantId)

  const purged = await purgeTenants(server.deps)
  const ids = purged.map((p) => p.id)
  assert.ok(ids.includes(doomed.tenantId))
  assert.equal(purged.find((p) => p.id === doomed.tenantId)?.slug, doomed.slug)
  assert.ok(!ids.includes(recent.tenantId), 'closed within the retention period: kept')
  assert.ok(!ids.includes(kept.tenantId))
  for (const [table, rows] of Object.entries(await tenantSnapshot(server, doomed.tenantId))) {
    assert.deepEqual(rows, [], `${table} of the purged tenant`)
  }
  assert.deepEqual(await conflicts(doomed.tenantId), [])
  assert.deepEqual(await tenantSnapshot(server, recent.tenantId), recentBefore)
  assert.deepEqual(await tenantSnapshot(server, kept.tenantId), keptBefore)
  assert.deepEqual(await conflicts(kept.tenantId), keptConflicts)

  // The slug is free again; the recent one's is still taken.
  const create = (slug: string) =>
    server.request('POST', '/v1/tenants', {
      tenant: { slug, name: 'Second life' },
      admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
    })
  const again = await create(doomed.slug)
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.notEqual(again.body.user.tenantId, doomed.tenantId)
  assert.equal((await create(recent.slug)).status, 409)
  // Nothing of it is left for a second run.
  assert.ok(!(await purgeTenants(server.deps)).some((p) => p.id === doomed.tenantId))
})

test('purge: a live tenant never loses a row, even named directly', async () => {
  const live = await populated()
  const before = await tenantSnapshot(server, live.tenantId)
  const far = new Date(server.clock.now().getTime() + 365 * DAY * 1000)
  assert.equal(await purgeTenant(server.deps.db, live.tenantId, far, 2), 0)
  assert.deepEqual(await tenantSnapshot(server, live.tenantId), before)
  assert.ok(!(await purgeTenants(server.deps)).some((p) => p.id === live.tenantId))
  assert.deepEqual(await tenantSnapshot(server, live.tenantId), before)
})

test('purge: a tenant is removed in bounded statements, however many rows it has', async () => {
  const t = await populated()
  await close(t, 0)
  const cutoff = new Date(server.clock.now().getTime() + 1000)
  // Two rows per statement: every table takes several statements, and all rows still go.
  const removed = await purgeTenant(server.deps.db, t.tenantId, cutoff, 2)
  assert.ok(removed > 10, `${removed} rows`)
  for (const [table, rows] of Object.entries(await tenantSnapshot(server, t.tenantId))) {
    assert.deepEqual(rows, [], table)
  }
})
