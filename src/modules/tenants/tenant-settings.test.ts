// GET and PATCH tenant (SPEC, Administration; CONTRACT §2 Tenant record, §3, §4).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { tenantBySlug, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  type Response,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { auditEvents, tenants } from '../../db/schema.ts'
import { supportedLocales } from '../../i18n/index.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

const RECORD_FIELDS = [
  'authPolicy',
  'branding',
  'breachedPasswordPolicy',
  'captcha',
  'createdAt',
  'defaultLocale',
  'dynamicClientRegistration',
  'hasIdpClientSecret',
  'id',
  'idpClientId',
  'idpOauthEnabled',
  'locales',
  'logoUrl',
  'mfaPolicy',
  'mfaRememberDays',
  'name',
  'passkeysEnabled',
  'passwordlessJitSignup',
  'passwordlessMethod',
  'plan',
  'requireVerifiedEmail',
  'securityNotifications',
  'slug',
]

async function setup() {
  const t = await createTenant(server)
  const member = await signup(server, t.slug)
  return { t, admin: t.admin.accessToken as string, member: member.accessToken as string }
}

const getTenant = (t: TenantFixture, token?: string) =>
  server.request('GET', `/v1/${t.slug}/tenant`, undefined, { token })
const patchTenant = (t: TenantFixture, body: unknown, token?: string) =>
  server.request('PATCH', `/v1/${t.slug}/tenant`, body, { token })

async function tenantUpdatedEvents(tenantId: string) {
  return server.deps.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, tenantId), eq(auditEvents.action, 'TenantUpdated')))
}

test('GET tenant answers the whole record to an admin', async () => {
  const { t, admin } = await setup()
  const res = await getTenant(t, admin)
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body).sort(), RECORD_FIELDS)
  const row = await tenantBySlug(server, t.slug)
  assert.deepEqual(res.body, {
    id: t.tenantId,
    slug: t.slug,
    name: `Tenant ${t.slug}`,
    plan: 'Free',
    mfaPolicy: 'Disabled',
    authPolicy: 'PasswordOnly',
    passwordlessJitSignup: false,
    passwordlessMethod: 'code',
    idpOauthEnabled: false,
    idpClientId: '',
    hasIdpClientSecret: false,
    requireVerifiedEmail: false,
    securityNotifications: true,
    passkeysEnabled: true,
    dynamicClientRegistration: false,
    breachedPasswordPolicy: 'block',
    captcha: null,
    mfaRememberDays: 0,
    branding: null,
    logoUrl: '',
    defaultLocale: 'en',
    locales: supportedLocales,
    createdAt: row.createdAt.toISOString(),
  })
})

test('GET and PATCH tenant accept an API key of the tenant, recorded as the apiKey actor', async () => {
  const { t } = await setup()
  const key = await insertApiKey(server, t.tenantId)
  const res = await getTenant(t, key)
  assert.equal(res.status, 200)
  assert.equal(res.body.id, t.tenantId)
  const patched = await patchTenant(t, { name: 'Renamed by key' }, key)
  assert.equal(patched.status, 200)
  const [event] = await tenantUpdatedEvents(t.tenantId)
  assert.equal(event.actorType, 'apiKey')
})

test('admin routes: a Member gets 403 admin_required and changes nothing', async () => {
  const { t, member } = await setup()
  expectError(await getTenant(t, member), 403, 'admin_required')
  await unchanged(server, t.tenantId, async () => {
    expectError(await patchTenant(t, { name: 'Member was here' }, member), 403, 'admin_required')
  })
})

test('authentication: no token, a bad token, a revoked or expired key are refused (401)', async () => {
  const { t } = await setup()
  const revoked = await insertApiKey(server, t.tenantId, { revokedAt: new Date() })
  const expired = await insertApiKey(server, t.tenantId, {
    expiresAt: new Date(server.clock.now().getTime() - 1000),
  })
  await unchanged(server, t.tenantId, async () => {
    expectError(await patchTenant(t, { name: 'x' }), 401, 'token_missing')
    expectError(await patchTenant(t, { name: 'x' }, 'not-a-jwt'), 401, 'token_invalid')
    expectError(await patchTenant(t, { name: 'x' }, revoked), 401, 'invalid_api_key')
    expectError(await patchTenant(t, { name: 'x' }, expired), 401, 'invalid_api_key')
    expectError(await patchTenant(t, { name: 'x' }, 'ak_live_unknown'), 401, 'invalid_api_key')
  })
})

test("tenant isolation: another tenant's admin token or API key cannot read or change this tenant", async () => {
  const { t } = await setup()
  const other = await setup()
  const otherKey = await insertApiKey(server, other.t.tenantId)
  expectError(await getTenant(t, other.admin), 401, 'token_invalid')
  expectError(await getTenant(t, otherKey), 401, 'invalid_api_key')
  await unchanged(server, t.tenantId, async () => {
    expectError(await patchTenant(t, { name: 'Hijacked' }, other.admin), 401, 'token_invalid')
    expectError(await patchTenant(t, { mfaPolicy: 'Disabled' }, otherKey), 401, 'invalid_api_key')
  })
})

test('an unknown slug answers 404 tenant_not_found before authentication', async () => {
  const res = await server.request('GET', '/v1/no-such-tenant-here/tenant')
  expectError(res, 404, 'tenant_not_found')
  const patched = await server.request('PATCH', '/v1/no-such-tenant-here/tenant', { name: 'x' })
  expectError(patched, 404, 'tenant_not_found')
})

test('PATCH tenant changes the given fields and records TenantUpdated with exactly those', async () => {
  const { t, admin } = await setup()
  const res = await patchTenant(
    t,
    {
      name: 'Acme Corp',
      mfaPolicy: 'Required',
      authPolicy: 'PasswordAndPasswordless',
      passwordlessJitSignup: true,
    },
    admin,
  )
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body).sort(), RECORD_FIELDS)
  assert.equal(res.body.name, 'Acme Corp')
  assert.equal(res.body.mfaPolicy, 'Required')
  assert.equal(res.body.authPolicy, 'PasswordAndPasswordless')
  assert.equal(res.body.passwordlessJitSignup, true)
  const row = await tenantBySlug(server, t.slug)
  assert.equal(row.name, 'Acme Corp')
  assert.equal(row.mfaPolicy, 'Required')
  assert.equal(row.authPolicy, 'PasswordAndPasswordless')
  assert.equal(row.passwordlessJitSignup, true)
  assert.deepEqual((await getTenant(t, admin)).body, res.body)

  const events = await tenantUpdatedEvents(t.tenantId)
  assert.equal(events.length, 1)
  assert.equal(events[0].actorType, 'user')
  assert.equal(events[0].actorId, t.admin.user.id)
  assert.deepEqual([...(events[0].metadata.fields as string[])].sort(), [
    'authPolicy',
    'mfaPolicy',
    'name',
    'passwordlessJitSignup',
  ])
  assert.deepEqual((events[0].metadata.changes as any).name, {
    from: `Tenant ${t.slug}`,
    to: 'Acme Corp',
  })

  // Only what differs is a change.
  const again = await patchTenant(t, { name: 'Acme Corp', mfaPolicy: 'Optional' }, admin)
  assert.equal(again.status, 200)
  const events2 = await tenantUpdatedEvents(t.tenantId)
  assert.equal(events2.length, 2)
  const latest = events2.find((e) => e.id !== events[0].id)
  assert.deepEqual(latest?.metadata.fields, ['mfaPolicy'])
})

test('PATCH tenant sets the account-lifecycle settings (CONTRACT §9) and records each change', async () => {
  const { t, admin } = await setup()
  const body = { requireVerifiedEmail: true, securityNotifications: false, passkeysEnabled: false }
  const res = await patchTenant(t, body, admin)
  assert.equal(res.status, 200)
  assert.deepEqual(
    {
      requireVerifiedEmail: res.body.requireVerifiedEmail,
      securityNotifications: res.body.securityNotifications,
      passkeysEnabled: res.body.passkeysEnabled,
    },
    body,
  )
  const row = await tenantBySlug(server, t.slug)
  assert.equal(row.requireVerifiedEmail, true)
  assert.equal(row.securityNotifications, false)
  assert.equal(row.passkeysEnabled, false)
  const [event] = await tenantUpdatedEvents(t.tenantId)
  assert.deepEqual(event.metadata.fields, [
    'requireVerifiedEmail',
    'securityNotifications',
    'passkeysEnabled',
  ])
  const config = await server.request('GET', `/v1/${t.slug}/auth/config`)
  assert.equal(config.body.passkeysEnabled, false)
  assert.equal(config.body.requireVerifiedEmail, true)
})

test('PATCH tenant with nothing new answers the record and records nothing', async () => {
  const { t, admin } = await setup()
  await unchanged(server, t.tenantId, async () => {
    const empty = await patchTenant(t, {}, admin)
    assert.equal(empty.status, 200)
    assert.equal(empty.body.id, t.tenantId)
    const same = await patchTenant(t, { name: `Tenant ${t.slug}`, mfaPolicy: 'Disabled' }, admin)
    assert.equal(same.status, 200)
    assert.equal(same.body.name, `Tenant ${t.slug}`)
  })
})

test('a changed authPolicy applies to the next sign-in at once', async () => {
  const { t, admin } = await setup()
  const login = () =>
    server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: t.adminEmail,
      password: t.adminPassword,
    })
  assert.equal((await login()).status, 200)
  const res = await patchTenant(t, { authPolicy: 'PasswordlessOnly' }, admin)
  assert.equal(res.status, 200)
  expectError(await login(), 401, 'password_login_disabled')
})

test('idpOauthEnabled: true without stored credentials is 400 idp_not_configured and applies nothing', async () => {
  const { t, admin } = await setup()
  await unchanged(server, t.tenantId, async () => {
    const res = await patchTenant(t, { name: 'Should not apply', idpOauthEnabled: true }, admin)
    expectError(res, 400, 'idp_not_configured')
  })
  // A client id alone is not enough.
  await server.deps.db
    .update(tenants)
    .set({ idpClientId: 'client-only' })
    .where(eq(tenants.id, t.tenantId))
  await unchanged(server, t.tenantId, async () => {
    expectError(await patchTenant(t, { idpOauthEnabled: true }, admin), 400, 'idp_not_configured')
  })
})

test('idpOauthEnabled can be turned on once credentials are stored, and off again; the secret never shows', async () => {
  const { t, admin } = await setup()
  const secret = 'very-secret-client-secret'
  await server.deps.db
    .update(tenants)
    .set({
      idpClientId: 'client-123',
      idpClientSecretEnc: server.deps.cipher.encrypt(secret, `idp:${t.tenantId}`),
    })
    .where(eq(tenants.id, t.tenantId))
  const on = await patchTenant(t, { idpOauthEnabled: true }, admin)
  assert.equal(on.status, 200)
  assert.equal(on.body.idpOauthEnabled, true)
  assert.equal(on.body.idpClientId, 'client-123')
  assert.equal(on.body.hasIdpClientSecret, true)
  const got = await getTenant(t, admin)
  assert.equal(got.body.idpOauthEnabled, true)
  assert.doesNotMatch(JSON.stringify(got.body), /very-secret|v1:/)
  const off = await patchTenant(t, { idpOauthEnabled: false }, admin)
  assert.equal(off.status, 200)
  assert.equal(off.body.idpOauthEnabled, false)
  assert.equal((await tenantBySlug(server, t.slug)).idpOauthEnabled, false)
})

test('PATCH tenant refuses bad values with 400 validation and changes nothing', async () => {
  const { t, admin } = await setup()
  const cases: [unknown, string][] = [
    [{ name: '' }, 'body.name'],
    [{ name: 'x'.repeat(121) }, 'body.name'],
    [{ name: 42 }, 'body.name'],
    [{ name: ['Acme'] }, 'body.name'],
    [{ name: null }, 'body.name'],
    [{ mfaPolicy: 'Sometimes' }, 'body.mfaPolicy'],
    [{ mfaPolicy: 'required' }, 'body.mfaPolicy'],
    [{ authPolicy: 'EmailOnly' }, 'body.authPolicy'],
    [{ passwordlessJitSignup: 'true' }, 'body.passwordlessJitSignup'],
    [{ passwordlessJitSignup: 1 }, 'body.passwordlessJitSignup'],
    [{ passwordlessMethod: 'magic' }, 'body.passwordlessMethod'],
    [{ idpOauthEnabled: 'yes' }, 'body.idpOauthEnabled'],
    [{ requireVerifiedEmail: 'true' }, 'body.requireVerifiedEmail'],
    [{ securityNotifications: 0 }, 'body.securityNotifications'],
    [{ passkeysEnabled: null }, 'body.passkeysEnabled'],
    [{ dynamicClientRegistration: 'true' }, 'body.dynamicClientRegistration'],
    [{ name: 'Fine', mfaPolicy: 'Nope' }, 'body.mfaPolicy'],
  ]
  await unchanged(server, t.tenantId, async () => {
    for (const [body, path] of cases) expectValidation(await patchTenant(t, body, admin), path)
    expectValidation(await patchTenant(t, ['name'], admin))
    expectValidation(await patchTenant(t, 'name', admin))
  })
})

test('PATCH tenant: malformed JSON, a wrong content type and an oversized body are 400 and change nothing', async () => {
  const { t, admin } = await setup()
  const send = (raw: string, contentType = 'application/json'): Promise<Response> =>
    server.request('PATCH', `/v1/${t.slug}/tenant`, undefined, {
      token: admin,
      raw,
      headers: { 'content-type': contentType },
    })
  await unchanged(server, t.tenantId, async () => {
    expectError(await send('{"name": "Acme"'), 400, 'malformed_json')
    expectError(
      await send('name=Acme', 'application/x-www-form-urlencoded'),
      400,
      'unsupported_media_type',
    )
    expectError(await send('{"name":"Acme"}', 'text/plain'), 400, 'unsupported_media_type')
    const huge = JSON.stringify({ name: 'Acme', padding: 'x'.repeat(100 * 1024) })
    expectError(await send(huge), 400, 'body_too_large')
  })
})

test('PATCH tenant ignores fields it does not own (plan, slug, id, credentials)', async () => {
  const { t, admin } = await setup()
  const res = await patchTenant(
    t,
    {
      name: 'Only this',
      plan: 'Enterprise',
      slug: 'stolen-slug',
      id: '00000000-0000-7000-8000-000000000000',
      idpClientId: 'injected',
      hasIdpClientSecret: true,
      logoUrl: 'https://evil.example/logo.png',
    },
    admin,
  )
  assert.equal(res.status, 200)
  const row = await tenantBySlug(server, t.slug)
  assert.equal(row.name, 'Only this')
  assert.equal(row.plan, 'Free')
  assert.equal(row.id, t.tenantId)
  assert.equal(row.idpClientId, null)
  assert.equal(res.body.idpClientId, '')
  assert.equal(res.body.logoUrl, '')
  assert.equal(await tenantBySlug(server, 'stolen-slug'), undefined)
})
