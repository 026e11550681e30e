// Impersonation (CONTRACT §22) over real HTTP: an admin's 15-minute token as a user, with
// act and no refresh token; every refusal with nothing changed (an API key, a caller
// without users:impersonate, an Admin, oneself, an inactive user, an unknown one, a bad
// reason); the impersonated session cannot change the password or factors, delete the
// account, step up or impersonate; UserImpersonated with the reason in both exports.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))

function impersonate(tenant: TenantFixture, userId: string, token: string, body: unknown) {
  return server.request('POST', `/v1/${tenant.slug}/users/${userId}/impersonate`, body, { token })
}

test('an admin signs in as a member: act, 15 minutes, no refresh token, /me names who acts; audited with the reason in both exports', async () => {
  const tenant = await createTenant(server)
  const member = await signup(server, tenant.slug)
  const res = await impersonate(tenant, member.user.id, tenant.admin.accessToken, {
    reason: 'Ticket 4711',
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(Object.keys(res.body).sort(), ['accessToken', 'accessTokenExpiresIn', 'user'])
  assert.equal(res.body.user.id, member.user.id)
  assert.ok(res.body.accessTokenExpiresIn <= 900)
  const claims = claimsOf(res.body.accessToken)
  assert.equal(claims.sub, member.user.id)
  assert.deepEqual(claims.act, { sub: tenant.admin.user.id })
  assert.ok(claims.exp - claims.iat <= 900)
  const me = await server.request('GET', `/v1/${tenant.slug}/me`, undefined, {
    token: res.body.accessToken,
  })
  assert.equal(me.status, 200)
  assert.equal(me.body.id, member.user.id)
  // Who acts, for the application's banner; the member's own token names nobody.
  assert.deepEqual(me.body.impersonatedBy, {
    id: tenant.admin.user.id,
    email: tenant.admin.user.email,
  })
  const own = await server.request('GET', `/v1/${tenant.slug}/me`, undefined, {
    token: member.accessToken,
  })
  assert.equal('impersonatedBy' in own.body, false)

  const audit = await server.request(
    'GET',
    `/v1/${tenant.slug}/audit?action=UserImpersonated`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  const event = audit.body.items.find((e: any) => e.action === 'UserImpersonated')
  assert.ok(event, JSON.stringify(audit.body))
  assert.equal(event.actorId, tenant.admin.user.id)
  assert.equal(event.userId, member.user.id)
  assert.equal(event.metadata.reason, 'Ticket 4711')
  for (const token of [member.accessToken, tenant.admin.accessToken]) {
    const exported = await server.request('POST', `/v1/${tenant.slug}/me/export`, undefined, {
      token,
    })
    assert.equal(exported.status, 200, JSON.stringify(exported.body))
    assert.ok(
      exported.body.auditEvents.some((e: any) => e.action === 'UserImpersonated'),
      'in both people’s exports',
    )
  }
})

test('the impersonated session cannot change the password or factors, delete the account, step up or impersonate', async () => {
  const tenant = await createTenant(server)
  const member = await signup(server, tenant.slug)
  const other = await signup(server, tenant.slug)
  const res = await impersonate(tenant, member.user.id, tenant.admin.accessToken, {
    reason: 'support',
  })
  const token = res.body.accessToken as string
  const before = await tenantSnapshot(server, tenant.tenantId)
  const calls: [string, string, unknown?][] = [
    [
      'PATCH',
      'me/password',
      { currentPassword: STRONG_PASSWORD, newPassword: 'a-new-long-passphrase-9' },
    ],
    ['DELETE', 'me'],
    ['POST', 'mfa/totp/enroll', {}],
    ['POST', 'mfa/totp/verify', { code: '123456' }],
    ['POST', 'mfa/recovery-codes/regenerate', {}],
    ['POST', 'me/passkeys/registration-options', {}],
    ['DELETE', 'me/passkeys/018f0000-0000-7000-8000-000000000000'],
    ['POST', 'me/reauthenticate', { password: STRONG_PASSWORD }],
    ['POST', `users/${other.user.id}/impersonate`, { reason: 'chain' }],
  ]
  for (const [method, path, body] of calls) {
    const refused = await server.request(method, `/v1/${tenant.slug}/${path}`, body, { token })
    expectError(refused, 403, 'impersonation_forbidden')
  }
  assert.deepEqual(await tenantSnapshot(server, tenant.tenantId), before, 'nothing changed')
  // The member's own session is untouched and may.
  const own = await server.request(
    'POST',
    `/v1/${tenant.slug}/mfa/totp/enroll`,
    {},
    {
      token: member.accessToken,
    },
  )
  assert.notEqual(own.status, 403)
})

test('refusals change nothing: an API key, no users:impersonate, an Admin, oneself, a suspended or unknown user, a bad reason', async () => {
  const tenant = await createTenant(server)
  const member = await signup(server, tenant.slug)
  const suspended = await signup(server, tenant.slug)
  const admin = tenant.admin.accessToken
  await server.request(
    'PATCH',
    `/v1/${tenant.slug}/users/${suspended.user.id}`,
    { status: 'Suspended' },
    { token: admin },
  )
  const before = await tenantSnapshot(server, tenant.tenantId)
  const key = await insertApiKey(server, tenant.tenantId)
  expectError(
    await impersonate(tenant, member.user.id, key, { reason: 'x' }),
    403,
    'api_key_not_allowed',
  )
  expectError(
    await impersonate(tenant, suspended.user.id, member.accessToken, { reason: 'x' }),
    403,
    'admin_required',
  )
  expectError(
    await impersonate(tenant, tenant.admin.user.id, admin, { reason: 'x' }),
    403,
    'impersonation_forbidden',
  )
  expectError(
    await impersonate(tenant, suspended.user.id, admin, { reason: 'x' }),
    403,
    'impersonation_forbidden',
  )
  expectError(
    await impersonate(tenant, '018f0000-0000-7000-8000-000000000000', admin, { reason: 'x' }),
    404,
    'not_found',
  )
  expectError(await impersonate(tenant, 'not-a-uuid', admin, { reason: 'x' }), 400, 'validation')
  for (const body of [{}, { reason: '' }, { reason: 'x'.repeat(501) }, { reason: 7 }]) {
    expectError(await impersonate(tenant, member.user.id, admin, body), 400, 'validation')
  }
  const stranger = await createTenant(server)
  expectError(
    await impersonate(stranger, member.user.id, stranger.admin.accessToken, { reason: 'x' }),
    404,
    'not_found',
  )
  const after = await tenantSnapshot(server, tenant.tenantId)
  assert.deepEqual(
    { ...after, apiKeys: [] },
    { ...before, apiKeys: [] },
    'nothing changed but the key this test made',
  )
})

test('no escalation: a caller holding users:impersonate may not impersonate a user holding a permission it lacks; a plain member it may', async () => {
  const tenant = await createTenant(server)
  const admin = { token: tenant.admin.accessToken as string }
  const role = async (name: string, permissions: string[]) => {
    const res = await server.request(
      'POST',
      `/v1/${tenant.slug}/roles`,
      { name, permissions },
      admin,
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  const give = async (userId: string, roles: string[]) => {
    const res = await server.request(
      'PUT',
      `/v1/${tenant.slug}/users/${userId}/roles`,
      { roles },
      admin,
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  await role('Support', ['users:read', 'users:impersonate'])
  await role('Owner-ish', ['tenant:write'])
  const agent = await signup(server, tenant.slug)
  const plain = await signup(server, tenant.slug)
  const powerful = await signup(server, tenant.slug)
  await give(agent.user.id, ['Support'])
  await give(powerful.user.id, ['Owner-ish'])
  const before = await tenantSnapshot(server, tenant.tenantId)
  expectError(
    await impersonate(tenant, powerful.user.id, agent.accessToken, { reason: 'x' }),
    403,
    'impersonation_forbidden',
  )
  assert.deepEqual(await tenantSnapshot(server, tenant.tenantId), before, 'nothing changed')
  const allowed = await impersonate(tenant, plain.user.id, agent.accessToken, { reason: 'ticket' })
  assert.equal(allowed.status, 200, JSON.stringify(allowed.body))
  // An Admin holds every permission: it may impersonate the powerful member.
  const byAdmin = await impersonate(tenant, powerful.user.id, admin.token, { reason: 'audit' })
  assert.equal(byAdmin.status, 200, JSON.stringify(byAdmin.body))
})
