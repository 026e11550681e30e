// Organization tokens (CONTRACT §18) over real HTTP: POST auth/refresh {refreshToken,
// organizationId} answers an access token with org_id and org_roles (the roles held in that
// organization only) while the refresh token stays the user's; a member of organization A
// never gets a token of B, of the same tenant or of another (403 not_a_member, the refresh
// token not spent); a removed member stops getting one; mfaRequired wants a session signed in
// with a second factor (403 mfa_required), or one that proved one since (me/reauthenticate with
// an authenticator or recovery code), and one that has it gets its token.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { decodeJwt } from 'jose'
import { unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { enrolTotp, totpAt } from '../../../test/fixtures/mfa.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
let other: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
})

let n = 0
const fresh = (prefix: string) => `${prefix} ${++n} ${Math.random().toString(36).slice(2, 6)}`
const call = (method: string, path: string, body: unknown, token?: string, slug = t.slug) =>
  server.request(method, `/v1/${slug}/${path}`, body, token ? { token } : {})
const refresh = (refreshToken: string, organizationId?: string, slug = t.slug) =>
  call(
    'POST',
    'auth/refresh',
    { refreshToken, ...(organizationId ? { organizationId } : {}) },
    undefined,
    slug,
  )

async function setup(tenant = t, body: Record<string, unknown> = {}) {
  const admin = tenant.admin.accessToken
  const res = await call(
    'POST',
    'organizations',
    { name: fresh('Org'), ...body },
    admin,
    tenant.slug,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.organization as { id: string }
}

async function orgRole(name: string) {
  const res = await call('POST', 'roles', { name, kind: 'organization' }, t.admin.accessToken)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.role.name as string
}

const join = async (orgId: string, userId: string, roles: string[] = []) => {
  const res = await call(
    'PUT',
    `organizations/${orgId}/members/${userId}`,
    { roles },
    t.admin.accessToken,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

test('a member gets an organization token with org_id and org_roles; the refresh token stays the user’s', async () => {
  const billing = await orgRole(fresh('Billing'))
  const a = await setup()
  const b = await setup()
  const user = await signup(server, t.slug)
  await join(a.id, user.user.id, [billing])
  await join(b.id, user.user.id)

  const res = await refresh(user.refreshToken, a.id)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const claims = decodeJwt(res.body.accessToken)
  assert.equal(claims.org_id, a.id)
  assert.deepEqual(claims.org_roles, [billing])
  assert.equal(claims.sub, user.user.id)
  // The new refresh token is a plain one: refreshing it without organizationId is no org token.
  const plain = await refresh(res.body.refreshToken)
  assert.equal(plain.status, 200)
  assert.equal(decodeJwt(plain.body.accessToken).org_id, undefined)
  // Organization B's token carries B and the roles held there (none), never A's.
  const inB = await refresh(plain.body.refreshToken, b.id)
  assert.equal(inB.status, 200, JSON.stringify(inB.body))
  assert.equal(decodeJwt(inB.body.accessToken).org_id, b.id)
  assert.deepEqual(decodeJwt(inB.body.accessToken).org_roles, [])
  // The organization token opens the API as the user.
  const me = await call('GET', 'me/organizations', undefined, inB.body.accessToken)
  assert.equal(me.status, 200)
})

test('a member of A never gets a token of B, of this tenant or another: 403 not_a_member, nothing spent', async () => {
  const a = await setup()
  const b = await setup()
  const elsewhere = await setup(other)
  const user = await signup(server, t.slug)
  await join(a.id, user.user.id)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    for (const id of [b.id, elsewhere.id, crypto.randomUUID()]) {
      expectError(await refresh(user.refreshToken, id), 403, 'not_a_member')
    }
  })
  // The refresh token was not spent by the refusals.
  const ok = await refresh(user.refreshToken, a.id)
  assert.equal(ok.status, 200, JSON.stringify(ok.body))
  // A malformed id is 400 validation; a refresh token already spent is answered as ever.
  const bad = await refresh(ok.body.refreshToken, 'not-a-uuid')
  assert.equal(bad.status, 400)
  expectError(await refresh(user.refreshToken, a.id), 401, 'refresh_token_reused')
})

test('a removed member, or one of a deleted organization, gets no organization token', async () => {
  const a = await setup()
  const user = await signup(server, t.slug)
  await join(a.id, user.user.id)
  const first = await refresh(user.refreshToken, a.id)
  assert.equal(first.status, 200)
  const gone = await call(
    'DELETE',
    `organizations/${a.id}/members/${user.user.id}`,
    undefined,
    t.admin.accessToken,
  )
  assert.equal(gone.status, 200)
  expectError(await refresh(first.body.refreshToken, a.id), 403, 'not_a_member')
  const b = await setup()
  await join(b.id, user.user.id)
  assert.equal(
    (await call('DELETE', `organizations/${b.id}`, undefined, t.admin.accessToken)).status,
    200,
  )
  expectError(await refresh(first.body.refreshToken, b.id), 403, 'not_a_member')
})

test('mfaRequired: a session without a second factor is 403 mfa_required; one signed in with TOTP gets its token', async () => {
  // The workspace asks a second factor of users who enrolled one.
  const policy = await call('PATCH', 'tenant', { mfaPolicy: 'Optional' }, t.admin.accessToken)
  assert.equal(policy.status, 200, JSON.stringify(policy.body))
  const org = await setup(t, { mfaRequired: true })
  const user = await signup(server, t.slug)
  await join(org.id, user.user.id)
  await unchanged(server, t.tenantId, async () => {
    expectError(await refresh(user.refreshToken, org.id), 403, 'mfa_required')
  })
  const secret = await enrolTotp(server, t.slug, user.accessToken)
  const login = await call('POST', 'auth/login', {
    email: user.email,
    password: STRONG_PASSWORD,
    totpCode: totpAt(server, secret),
  })
  assert.equal(login.status, 200, JSON.stringify(login.body))
  const res = await refresh(login.body.refreshToken, org.id)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(decodeJwt(res.body.accessToken).org_id, org.id)
  // The session keeps it across refreshes.
  const again = await refresh(res.body.refreshToken, org.id)
  assert.equal(again.status, 200, JSON.stringify(again.body))
})

test('mfaRequired: a session that proves an authenticator code by me/reauthenticate has proved a second factor; a password does not', async () => {
  await call('PATCH', 'tenant', { mfaPolicy: 'Optional' }, t.admin.accessToken)
  const org = await setup(t, { mfaRequired: true })
  const user = await signup(server, t.slug)
  await join(org.id, user.user.id)
  // Signed up before enrolling: the session proved no second factor.
  const secret = await enrolTotp(server, t.slug, user.accessToken)
  const reauth = (body: Record<string, string>) =>
    call('POST', 'me/reauthenticate', body, user.accessToken)
  assert.equal((await reauth({ password: STRONG_PASSWORD })).status, 200)
  expectError(await refresh(user.refreshToken, org.id), 403, 'mfa_required')
  // A wrong code proves nothing.
  expectError(await reauth({ totpCode: '000000' }), 401, 'invalid_mfa_code')
  expectError(await refresh(user.refreshToken, org.id), 403, 'mfa_required')
  assert.equal((await reauth({ totpCode: totpAt(server, secret, 1) })).status, 200)
  const res = await refresh(user.refreshToken, org.id)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(decodeJwt(res.body.accessToken).org_id, org.id)
})
