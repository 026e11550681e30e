// The typed client (issue 11 §2): a method for every operationId of the served document,
// with its method and path; the main flows against the real service; errors as
// AuthServiceError with status, code, reason, details and Retry-After.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import {
  createTenant,
  GENEROUS_LIMITS,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../test/helpers.ts'
import {
  ADMIN_OPERATIONS,
  AuthServiceError,
  createAdminClient,
  createClient,
  createSessionClient,
  OPERATIONS,
} from '../src/index.ts'

let server: TestServer
let tenant: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  tenant = await createTenant(server)
})

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

test('the client has a method for every operationId of the served document, with its method and path', async () => {
  const client = createClient({ baseUrl: server.url, tenant: tenant.slug })
  const doc = (await client.getOpenApiDocument()) as {
    paths: Record<string, Record<string, { operationId?: string }>>
  }
  const served: Record<string, [string, string]> = {}
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const id = item[method]?.operationId
      if (id) served[id] = [method, path]
    }
  }
  assert.deepEqual(
    Object.fromEntries(Object.entries(OPERATIONS).map(([id, entry]) => [id, [...entry]])),
    served,
  )
  for (const id of Object.keys(served)) {
    assert.equal(typeof (client as Record<string, unknown>)[id], 'function', id)
  }
  const admin = createAdminClient({ baseUrl: server.url, tenant: tenant.slug, apiKey: 'ak_x' })
  assert.deepEqual(Object.keys(admin).sort(), [...ADMIN_OPERATIONS].sort())
  console.log(`operations in the document: ${Object.keys(served).length}, all on the client`)
})

test('public calls: health, readiness, JWKS, auth config, login code', async () => {
  const client = createClient({ baseUrl: server.url, tenant: tenant.slug })
  assert.deepEqual(await client.getHealth(), { status: 'ok' })
  assert.equal((await client.getReadiness()).status, 'ready')
  assert.deepEqual(await client.getJwks(), { keys: [] })
  assert.equal((await client.getAuthConfig()).authPolicy, 'PasswordOnly')
  await assert.rejects(client.requestLoginCode({ body: { email: uniqueEmail() } }), {
    name: 'AuthServiceError',
    status: 403,
    reason: 'passwordless_disabled',
  })
})

test('a session: signup, me, refresh, change password, logout', async () => {
  const session = createSessionClient({ baseUrl: server.url, tenant: tenant.slug })
  const email = uniqueEmail()
  const signedUp = await session.signup({ email, password: STRONG_PASSWORD })
  assert.ok('user' in signedUp, 'a session (the workspace does not require a verified address)')
  assert.equal(signedUp.user.email, email)
  assert.ok(signedUp.expiresAt > Date.now() + 800_000)

  const me = await session.api.getMe()
  assert.equal(me.id, signedUp.user.id)

  const refreshed = await session.refresh()
  assert.ok(refreshed)
  assert.notEqual(refreshed.refreshToken, signedUp.refreshToken)
  assert.equal((await session.getSession())?.refreshToken, refreshed.refreshToken)
  assert.equal(
    (await session.api.getMe()).id,
    signedUp.user.id,
    'the new access token is used after a refresh',
  )

  await session.logout()
  assert.equal(await session.getSession(), null)
  await assert.rejects(session.api.getMe(), { status: 401, reason: 'not_signed_in' })

  const again = await session.login({ email, password: STRONG_PASSWORD })
  assert.equal(again.user.id, signedUp.user.id)
  await session.api.changePassword({
    body: { currentPassword: STRONG_PASSWORD, newPassword: 'amber-meadow-violin-42' },
  })
  await session.logoutAll()
  assert.equal(await session.getSession(), null)
  // The old access token is revoked at the service too.
  await assert.rejects(
    createClient({ baseUrl: server.url, tenant: tenant.slug, token: again.accessToken }).getMe(),
    {
      status: 401,
    },
  )
})

test('errors are AuthServiceError with status, code, reason, message and details', async () => {
  const client = createClient({ baseUrl: server.url, tenant: tenant.slug })
  const error = await client
    .login({ body: { email: uniqueEmail(), password: 'wrong-password-1234' } })
    .then(
      () => assert.fail('login succeeded'),
      (e: unknown) => e,
    )
  assert.ok(error instanceof AuthServiceError)
  assert.equal(error.status, 401)
  assert.equal(error.code, 'UNAUTHORIZED')
  assert.equal(error.reason, 'invalid_credentials')
  assert.equal(error.message, 'Invalid email or password.')
  assert.deepEqual(error.details, { reason: 'invalid_credentials' })
  assert.equal(error.retryAfter, undefined)

  const invalid = await client
    .signup({ body: { email: 'not an email', password: STRONG_PASSWORD } })
    .then(
      () => assert.fail('signup succeeded'),
      (e: unknown) => e,
    )
  assert.ok(invalid instanceof AuthServiceError)
  assert.equal(invalid.reason, 'validation')
  assert.ok(Array.isArray(invalid.details?.issues))
})

test('a 429 carries retryAfter from Retry-After', async (t) => {
  const limited = await startTestServer(t, {
    limits: { ...GENEROUS_LIMITS, signup: { points: 1, seconds: 3600 } },
  })
  const t2 = await createTenant(limited)
  const client = createClient({ baseUrl: limited.url, tenant: t2.slug })
  const headers = { 'x-forwarded-for': '10.9.9.9' }
  await client.signup({ body: { email: uniqueEmail(), password: STRONG_PASSWORD }, headers })
  await assert.rejects(
    client.signup({ body: { email: uniqueEmail(), password: STRONG_PASSWORD }, headers }),
    (e: unknown) =>
      e instanceof AuthServiceError &&
      e.status === 429 &&
      e.code === 'TOO_MANY_REQUESTS' &&
      typeof e.retryAfter === 'number' &&
      e.retryAfter > 0,
  )
})

test('the admin client: users, invites, audit, tenant and introspection with an API key', async () => {
  const client = createClient({ baseUrl: server.url, tenant: tenant.slug })
  const { plaintext, apiKey } = await client.createApiKey({
    body: { name: 'sdk-test', environment: 'test' },
    token: tenant.admin.accessToken,
  })
  assert.match(plaintext, /^ak_test_/)
  const keys = await client.listApiKeys({ token: tenant.admin.accessToken })
  assert.ok(keys.items.some((k) => k.id === apiKey.id))

  const admin = createAdminClient({ baseUrl: server.url, tenant: tenant.slug, apiKey: plaintext })
  const users = await admin.listUsers({ query: { limit: 50 } })
  assert.ok(users.items.some((u) => u.email === tenant.adminEmail))

  const email = uniqueEmail('invitee')
  const { invite } = await admin.createInvite({ body: { email, role: 'Member' } })
  const invites = await admin.listInvites()
  assert.ok(invites.items.some((i) => i.id === invite.id))
  await admin.revokeInvite({ path: { id: invite.id } })

  const audit = await admin.listAuditEvents({ query: { limit: 20 } })
  assert.ok(audit.items.length > 0)
  assert.equal((await admin.getTenant()).slug, tenant.slug)

  const member = createSessionClient({ baseUrl: server.url, tenant: tenant.slug })
  const m = await member.signup({ email: uniqueEmail(), password: STRONG_PASSWORD })
  assert.ok('user' in m)
  const updated = await admin.updateUser({
    path: { userId: m.user.id },
    body: { status: 'Suspended' },
  })
  assert.equal(updated.status, 'Suspended')
  assert.deepEqual(await admin.introspectToken({ body: { token: m.accessToken } }), {
    active: false,
  })

  // Keys are refused on the api-keys routes (CONTRACT §4).
  await assert.rejects(client.listApiKeys({ token: plaintext }), {
    status: 403,
    reason: 'api_key_not_allowed',
  })
})
