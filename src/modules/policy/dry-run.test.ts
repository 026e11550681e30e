// Policy dry-run (CONTRACT §21): POST policy/dry-run answers, from the period's UserLogin
// events and today's users, what proposed settings would do to each user who signed in, and
// changes nothing (tenantSnapshot, audit rows included, equal before and after). The rules
// are docs/security-model.md's "Policy dry-run".
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { eq } from '../../db/orm.ts'
import { users } from '../../db/schema.ts'

const CERT = readFileSync(
  new URL('../../../test/fixtures/sso/idp-signing.pem', import.meta.url),
  'utf8',
).trim()

let server: TestServer
let t: TenantFixture
let admin: string
const DOMAIN = `corp-${Date.now().toString(36)}.example.com`
/** The users of the fixture, by name: id and address. */
const u: Record<string, { id: string; email: string }> = {}

const login = async (email: string) => {
  const res = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email,
    password: STRONG_PASSWORD,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}
const setUser = (name: string, changes: Partial<typeof users.$inferInsert>) =>
  server.deps.db.update(users).set(changes).where(eq(users.id, u[name].id))
const dryRun = (body: unknown, token = admin, slug = t.slug) =>
  unchanged(server, t.tenantId, () =>
    server.request('POST', `/v1/${slug}/policy/dry-run`, body, { token }),
  )
/** The answer's affected list as `name outcome reason`, by name. */
const names = (affected: { userId: string; email: string; outcome: string; reason: string }[]) =>
  affected
    .map((a) => {
      const name = Object.keys(u).find((k) => u[k].id === a.userId)
      assert.ok(name, `an unknown user ${a.email}`)
      assert.equal(a.email, u[name].email)
      return `${name} ${a.outcome} ${a.reason}`
    })
    .sort()

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  const add = async (name: string, email = uniqueEmail(name)) => {
    const made = await signup(server, t.slug, email)
    u[name] = { id: made.user.id, email }
    return made
  }
  // Signed in 40 days ago only: outside the default period of 30 days.
  await add('old')
  await login(u.old.email)
  server.clock.advance(40 * 86_400)
  // The ones of the period, all by password but `code` and `sso`.
  for (const name of ['plain', 'verified', 'totp', 'breached', 'suspended']) {
    await add(name)
    await login(u[name].email)
  }
  await add('corp', `corp-user@${DOMAIN}`)
  await login(u.corp.email)
  await add('corpAdmin', `corp-admin@${DOMAIN}`)
  await login(u.corpAdmin.email)
  await add('code')
  await add('viaSso', `via-sso@${DOMAIN}`)
  const fresh = await login(t.adminEmail)
  admin = fresh.accessToken
  u.admin = { id: fresh.user.id, email: t.adminEmail }
  // Emailed-code and SSO sign-ins, as their routes record them (signin/pipeline.ts,
  // federation/sso-signin.ts).
  const actor = { type: 'user' as const, id: null, ip: null, userAgent: null }
  await server.deps.audit.record(server.deps.db, t.tenantId, actor, [
    {
      action: 'UserLogin',
      userId: u.code.id,
      email: u.code.email,
      metadata: { via: 'passwordless' },
    },
    {
      action: 'UserLogin',
      userId: u.viaSso.id,
      email: u.viaSso.email,
      metadata: { method: 'sso' },
    },
  ])
  // Today's users: what each one is now.
  for (const name of [
    'verified',
    'totp',
    'breached',
    'corp',
    'corpAdmin',
    'code',
    'viaSso',
    'admin',
  ])
    await setUser(name, { emailVerified: true })
  await setUser('totp', { totpEnabled: true })
  await setUser('breached', { passwordBreached: true })
  await setUser('suspended', { status: 'Suspended' })
  await setUser('corpAdmin', { role: 'Admin' })
})

// signup opens a session without a UserLogin; each `login` above is one. In the period:
// plain, verified, totp, breached, suspended, corp, corpAdmin, admin, code, viaSso.
const PERIOD = { signIns: 10, users: 10 }

test('today’s settings (nothing proposed): the breached password and the code sign-in under PasswordOnly', async () => {
  const res = await dryRun({})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(Object.keys(res.body).sort(), ['affected', 'signIns', 'users'])
  assert.equal(res.body.signIns, PERIOD.signIns)
  assert.equal(res.body.users, PERIOD.users)
  assert.deepEqual(names(res.body.affected), [
    'breached password_change_needed password_breached',
    'code blocked passwordless_disabled',
  ])
  // Sorted by address.
  const emails = res.body.affected.map((a: { email: string }) => a.email)
  assert.deepEqual(emails, [...emails].sort())
})

test('mfaPolicy Required: everyone without TOTP needs a second factor; Optional asks nobody new', async () => {
  const base = { authPolicy: 'PasswordAndPasswordless', breachedPasswordPolicy: 'off' }
  const required = await dryRun({ ...base, mfaPolicy: 'Required' })
  assert.equal(required.status, 200, JSON.stringify(required.body))
  assert.deepEqual(
    names(required.body.affected),
    ['admin', 'breached', 'code', 'corp', 'corpAdmin', 'plain', 'verified', 'viaSso']
      .map((n) => `${n} second_factor_needed mfa_not_enrolled`)
      .sort(),
  )
  const optional = await dryRun({ ...base, mfaPolicy: 'Optional' })
  assert.deepEqual(optional.body.affected, [])
})

test('authPolicy PasswordlessOnly blocks who signed in by password; PasswordAndPasswordless nobody', async () => {
  const only = await dryRun({ authPolicy: 'PasswordlessOnly', breachedPasswordPolicy: 'off' })
  assert.equal(only.status, 200, JSON.stringify(only.body))
  assert.deepEqual(
    names(only.body.affected),
    ['admin', 'breached', 'corp', 'corpAdmin', 'plain', 'totp', 'verified']
      .map((n) => `${n} blocked password_login_disabled`)
      .sort(),
  )
  const both = await dryRun({
    authPolicy: 'PasswordAndPasswordless',
    breachedPasswordPolicy: 'off',
  })
  assert.deepEqual(both.body.affected, [])
})

test('requireVerifiedEmail blocks an unverified address that signed in by password', async () => {
  const res = await dryRun({
    requireVerifiedEmail: true,
    authPolicy: 'PasswordAndPasswordless',
    breachedPasswordPolicy: 'off',
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(names(res.body.affected), ['plain blocked email_not_verified'])
})

test('enforcedSsoDomains: its users go to SSO (an Admin and who signed in by SSO excepted); the first rule wins', async () => {
  const res = await dryRun({
    enforcedSsoDomains: [DOMAIN.toUpperCase()],
    mfaPolicy: 'Required',
    breachedPasswordPolicy: 'off',
    authPolicy: 'PasswordAndPasswordless',
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const got = names(res.body.affected)
  assert.ok(got.includes('corp sso_redirect sso_required'), got.join())
  assert.ok(got.includes('corpAdmin second_factor_needed mfa_not_enrolled'), got.join())
  assert.ok(got.includes('viaSso second_factor_needed mfa_not_enrolled'), got.join())
  assert.equal(got.filter((g) => g.includes('sso_redirect')).length, 1)
})

test('omitted enforcedSsoDomains is today’s enforcement; [] proposes none', async () => {
  const made = await server.request(
    'POST',
    `/v1/${t.slug}/sso-connections`,
    {
      name: 'Entra',
      type: 'saml',
      domains: [DOMAIN],
      enforce: true,
      saml: {
        idpEntityId: 'https://sts.example.net/abc/',
        idpSsoUrl: 'https://login.example.net/abc/saml2',
        idpCertificates: [CERT],
      },
    },
    { token: admin },
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const base = { breachedPasswordPolicy: 'off', authPolicy: 'PasswordAndPasswordless' }
  const today = await dryRun(base)
  assert.deepEqual(names(today.body.affected), ['corp sso_redirect sso_required'])
  const none = await dryRun({ ...base, enforcedSsoDomains: [] })
  assert.deepEqual(none.body.affected, [])
  const off = await server.request(
    'PATCH',
    `/v1/${t.slug}/sso-connections/${made.body.connection.id}`,
    { enforce: false },
    { token: admin },
  )
  assert.equal(off.status, 200, JSON.stringify(off.body))
  assert.deepEqual((await dryRun(base)).body.affected, [])
})

test('sinceDays: 90 reaches the sign-in of 40 days ago, 1 the ones of today', async () => {
  const long = await dryRun({
    sinceDays: 90,
    mfaPolicy: 'Required',
    authPolicy: 'PasswordAndPasswordless',
  })
  assert.equal(long.status, 200, JSON.stringify(long.body))
  assert.equal(long.body.signIns, PERIOD.signIns + 1)
  assert.equal(long.body.users, PERIOD.users + 1)
  assert.ok(names(long.body.affected).includes('old second_factor_needed mfa_not_enrolled'))
  const day = await dryRun({ sinceDays: 1 })
  assert.equal(day.body.signIns, PERIOD.signIns)
  const month = await dryRun({ sinceDays: 30, mfaPolicy: 'Required' })
  assert.ok(!names(month.body.affected).some((n) => n.startsWith('old ')))
})

test('bad input: 400 validation and nothing changed', async () => {
  const cases: [unknown, string | undefined][] = [
    [{ sinceDays: 0 }, 'body.sinceDays'],
    [{ sinceDays: 91 }, 'body.sinceDays'],
    [{ sinceDays: 1.5 }, 'body.sinceDays'],
    [{ sinceDays: '30' }, 'body.sinceDays'],
    [{ mfaPolicy: 'Sometimes' }, undefined],
    [{ authPolicy: 'passwordlessonly' }, undefined],
    [{ requireVerifiedEmail: 'yes' }, undefined],
    [{ breachedPasswordPolicy: 'warn' }, undefined],
    [{ enforcedSsoDomains: 'corp.example.com' }, undefined],
    [{ enforcedSsoDomains: ['not a domain'] }, 'body.enforcedSsoDomains.0'],
    [{ enforcedSsoDomains: ['corp.example.com', 'localhost'] }, 'body.enforcedSsoDomains.1'],
    [{ enforcedSsoDomains: [''] }, undefined],
    [[], undefined],
  ]
  for (const [body, path] of cases) {
    const res = await dryRun(body)
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`)
    expectValidation(res, path)
  }
  // A field the body does not have is dropped, as everywhere (plugins/validation.ts).
  const extra = await dryRun({ mfaRememberDays: 3, mfaPolicy: 'Optional' })
  assert.deepEqual(extra.body, (await dryRun({ mfaPolicy: 'Optional' })).body)
})

test('a Member is 403 admin_required; an API key may run it', async () => {
  const other = await createTenant(server)
  const member = await memberToken(server, other.slug)
  const refused = await unchanged(server, other.tenantId, () =>
    server.request('POST', `/v1/${other.slug}/policy/dry-run`, {}, { token: member }),
  )
  expectError(refused, 403, 'admin_required')
  const key = await insertApiKey(server, t.tenantId)
  const res = await dryRun({}, key)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  // Another tenant's dry-run sees only its own sign-ins.
  const otherRun = await server.request(
    'POST',
    `/v1/${other.slug}/policy/dry-run`,
    {},
    {
      token: other.admin.accessToken,
    },
  )
  assert.equal(otherRun.status, 200, JSON.stringify(otherRun.body))
  assert.equal(otherRun.body.users, 0)
})
