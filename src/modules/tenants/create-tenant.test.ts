// POST /v1/tenants (SPEC capability 1; CONTRACT §2): a tenant with its first admin, signed in.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  actionsSince,
  auditSince,
  countUsersWithEmail,
  tenantBySlug,
  tenantSnapshot,
  userByEmail,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  STRONG_PASSWORD,
  startServer,
  startTestServer,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from '../../../test/helpers.ts'
import { eq, sql } from '../../db/orm.ts'
import { tenants } from '../../db/schema.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

function body(overrides: { tenant?: Record<string, unknown>; admin?: Record<string, unknown> }) {
  return {
    tenant: { slug: uniqueSlug(), name: 'Acme Rockets', ...overrides.tenant },
    admin: { email: uniqueEmail('admin'), password: STRONG_PASSWORD, ...overrides.admin },
  }
}

const EDGE_NAME = 'Edge Slug Fixture'

/**
 * A one-character slug nobody holds. On a database kept between runs, the 36 of them run
 * out, so one held by an earlier run of this very test (recognised by its name) is renamed.
 */
async function freeOneCharacterSlug(): Promise<string> {
  const held = await server.deps.db
    .select({ id: tenants.id, slug: tenants.slug, name: tenants.name })
    .from(tenants)
    .where(sql`length(${tenants.slug}) = 1`)
  const taken = new Set(held.map((r) => r.slug))
  const free = [...'abcdefghijklmnopqrstuvwxyz0123456789'].filter((c) => !taken.has(c))
  if (free.length > 0) return free[Math.floor(Math.random() * free.length)]
  const mine = held.find((r) => r.name === EDGE_NAME)
  assert.ok(mine, 'every one-character slug is held by someone else')
  await server.deps.db
    .update(tenants)
    .set({ slug: uniqueSlug('old') })
    .where(eq(tenants.id, mine.id))
  server.deps.tenants.forget(mine.slug)
  return mine.slug
}

/** Asserts a refused creation left no tenant and no admin behind. */
async function assertNothingCreated(sent: ReturnType<typeof body>) {
  if (typeof sent.tenant?.slug === 'string') {
    assert.equal(await tenantBySlug(server, sent.tenant.slug), undefined, 'no tenant row')
  }
  if (typeof sent.admin?.email === 'string') {
    assert.equal(await countUsersWithEmail(server, sent.admin.email), 0, 'no admin row')
  }
}

describe('POST /v1/tenants', () => {
  test('creates the tenant and its first admin, signed in', async () => {
    const sent = body({})
    const res = await server.request('POST', '/v1/tenants', sent, {
      headers: { 'user-agent': 'create-tenant-test/1.0' },
      ip: '10.9.8.7',
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.tenantSlug, sent.tenant.slug)
    assert.equal(res.body.accessTokenExpiresIn, 900)
    assert.equal(res.body.refreshTokenExpiresIn, 2592000)
    assert.equal(typeof res.body.accessToken, 'string')
    assert.equal(typeof res.body.refreshToken, 'string')
    const user = res.body.user
    assert.deepEqual(Object.keys(user).sort(), [
      'createdAt',
      'displayName',
      'email',
      'emailVerified',
      'externalId',
      'familyName',
      'givenName',
      'id',
      'lastLoginAt',
      'locale',
      'lockedUntil',
      'role',
      'roles',
      'status',
      'tenantId',
      'totpEnrolled',
    ])
    assert.equal(user.email, sent.admin.email)
    assert.equal(user.role, 'Admin')
    assert.equal(user.status, 'Active')
    assert.equal(user.totpEnrolled, false)
    assert.equal(user.lastLoginAt, null)

    const tenant = await tenantBySlug(server, sent.tenant.slug)
    assert.ok(tenant)
    assert.equal(tenant.id, user.tenantId)
    assert.equal(tenant.name, 'Acme Rockets')
    assert.equal(tenant.plan, 'Free', 'plan defaults to Free')
    assert.equal(tenant.mfaPolicy, 'Disabled')
    assert.equal(tenant.authPolicy, 'PasswordOnly')
    assert.equal(tenant.passwordlessJitSignup, false)
    assert.equal(tenant.idpOauthEnabled, false)

    const stored = await userByEmail(server, tenant.id, sent.admin.email)
    assert.ok(stored?.passwordHash?.startsWith('$argon2id$'), 'password stored as argon2id')
    assert.ok(!JSON.stringify(res.body).includes('argon2'), 'no hash in the response')

    const audit = await auditSince(server, tenant.id, new Set())
    assert.deepEqual(
      audit.map((e) => e.action),
      ['SessionCreated', 'TenantCreated', 'UserSignup'],
    )
    for (const event of audit) {
      assert.equal(event.ip, '10.9.8.7')
      assert.equal(event.userAgent, 'create-tenant-test/1.0')
      assert.equal(event.userId, user.id)
      assert.equal(event.actorId, user.id)
    }

    // The tokens work at once.
    const me = await server.request('GET', `/v1/${sent.tenant.slug}/me`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(me.status, 200)
    assert.equal(me.body.role, 'Admin')
    assert.equal(me.body.tenant.name, 'Acme Rockets')
    const refreshed = await server.request('POST', `/v1/${sent.tenant.slug}/auth/refresh`, {
      refreshToken: res.body.refreshToken,
    })
    assert.equal(refreshed.status, 200)
  })

  test('takes the plan it is given', async () => {
    for (const plan of ['Starter', 'Growth', 'Enterprise', 'Free']) {
      const sent = body({ tenant: { plan } })
      const res = await server.request('POST', '/v1/tenants', sent)
      assert.equal(res.status, 200)
      assert.equal((await tenantBySlug(server, sent.tenant.slug))?.plan, plan)
    }
  })

  test('accepts slugs at the edges of the pattern', async () => {
    const longest = `${uniqueSlug()}-${'z'.repeat(50)}`
    assert.equal(longest.length, 63)
    for (const slug of [await freeOneCharacterSlug(), longest, `${uniqueSlug()}-9`]) {
      const res = await server.request(
        'POST',
        '/v1/tenants',
        body({ tenant: { slug, name: EDGE_NAME } }),
      )
      assert.equal(res.status, 200, `${slug}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.tenantSlug, slug)
    }
  })

  test('a duplicate slug is 409 slug_taken and changes nothing', async () => {
    const t = await createTenant(server)
    const snapshot = await tenantSnapshot(server, t.tenantId)
    const sent = body({ tenant: { slug: t.slug, name: 'Someone Else' } })
    const res = await server.request('POST', '/v1/tenants', sent)
    expectError(res, 409, 'slug_taken')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), snapshot)
    assert.equal(await countUsersWithEmail(server, sent.admin.email), 0)
  })

  test('two parallel creations of one slug: exactly one wins, the other is 409', async () => {
    const slug = uniqueSlug()
    const results = await Promise.all(
      [0, 1].map(() => server.request('POST', '/v1/tenants', body({ tenant: { slug } }))),
    )
    const statuses = results.map((r) => r.status).sort()
    assert.deepEqual(statuses, [200, 409])
    expectError(results.find((r) => r.status === 409)!, 409, 'slug_taken')
    const tenant = await tenantBySlug(server, slug)
    assert.ok(tenant)
    const snapshot = await tenantSnapshot(server, tenant.id)
    assert.equal(snapshot.users.length, 1, 'only the winner has an admin')
  })

  test('reserved slugs are refused with 400', async () => {
    for (const slug of ['v1', 'tenants', 'invites', 'health', 'docs']) {
      const sent = body({ tenant: { slug } })
      const res = await server.request('POST', '/v1/tenants', sent)
      expectError(res, 400, 'invalid_slug')
      await assertNothingCreated(sent)
    }
  })

  test('slugs outside the pattern are 400 validation', async () => {
    const bad = [
      '',
      'Acme',
      '-acme',
      'acme-',
      'ac me',
      'acme_rockets',
      'acmé',
      'a.b',
      `a${'b'.repeat(62)}c`, // 64 characters
      'a/b',
    ]
    for (const slug of bad) {
      const sent = body({ tenant: { slug } })
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res, 'body.tenant.slug')
      await assertNothingCreated(sent)
    }
  })

  test('a name outside 1 to 120 characters is 400', async () => {
    for (const name of ['', 'n'.repeat(121)]) {
      const sent = body({ tenant: { name } })
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res, 'body.tenant.name')
      await assertNothingCreated(sent)
    }
    const ok = await server.request(
      'POST',
      '/v1/tenants',
      body({ tenant: { name: 'n'.repeat(120) } }),
    )
    assert.equal(ok.status, 200)
  })

  test('an unknown plan is 400', async () => {
    for (const plan of ['Pro', 'free', '', 3]) {
      const sent = body({ tenant: { plan } })
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res, 'body.tenant.plan')
      await assertNothingCreated(sent)
    }
  })

  test('missing objects and fields are 400 validation naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ admin: body({}).admin }, 'body.tenant'],
      [{ tenant: body({}).tenant }, 'body.admin'],
      [{ tenant: { name: 'No Slug' }, admin: body({}).admin }, 'body.tenant.slug'],
      [{ tenant: { slug: uniqueSlug() }, admin: body({}).admin }, 'body.tenant.name'],
      [{ tenant: body({}).tenant, admin: { password: STRONG_PASSWORD } }, 'body.admin.email'],
      [{ tenant: body({}).tenant, admin: { email: uniqueEmail() } }, 'body.admin.password'],
      [{}, 'body.tenant'],
    ]
    for (const [sent, path] of cases) {
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res, path)
      await assertNothingCreated(sent as ReturnType<typeof body>)
    }
  })

  test('wrong types are 400 and never coerced', async () => {
    const cases: [ReturnType<typeof body>, string][] = [
      [body({ tenant: { slug: 12345 } }), 'body.tenant.slug'],
      [body({ tenant: { name: ['Acme'] } }), 'body.tenant.name'],
      [body({ tenant: { name: 42 } }), 'body.tenant.name'],
      [body({ admin: { email: ['a@example.com'] } }), 'body.admin.email'],
      [body({ admin: { password: 123456789012345 } }), 'body.admin.password'],
      [body({ admin: { password: true } }), 'body.admin.password'],
      [body({ admin: { password: null } }), 'body.admin.password'],
    ]
    for (const [sent, path] of cases) {
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res, path)
      await assertNothingCreated(sent)
    }
    for (const sent of [
      { tenant: 'acme', admin: body({}).admin },
      { tenant: body({}).tenant, admin: [] },
    ]) {
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res)
    }
  })

  test('a bad admin email is 400', async () => {
    const long = `${'a'.repeat(64)}@${'b'.repeat(186)}.com`
    assert.equal(long.length, 255)
    for (const email of ['not-an-email', 'a@b', '@example.com', 'a b@example.com', '', long]) {
      const sent = body({ admin: { email } })
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res, 'body.admin.email')
      await assertNothingCreated(sent)
    }
    const longest = `${'a'.repeat(64)}@${'b'.repeat(185)}.com`
    assert.equal(longest.length, 254)
    const ok = await server.request('POST', '/v1/tenants', body({ admin: { email: longest } }))
    assert.equal(ok.status, 200, 'an address of 254 characters is accepted')
  })

  test('an admin password outside 12 to 1024 characters is 400', async () => {
    for (const password of ['short-pw-11', 'p'.repeat(1025)]) {
      const sent = body({ admin: { password } })
      const res = await server.request('POST', '/v1/tenants', sent)
      expectValidation(res, 'body.admin.password')
      await assertNothingCreated(sent)
    }
  })

  test('a weak admin password is 400 password_too_weak', async () => {
    const email = uniqueEmail('weakling')
    const cases = [
      body({ admin: { password: 'qwerty123456' } }), // on the common-password list
      body({ admin: { password: 'QWERTY123456' } }), // the list ignores case
      body({ admin: { email, password: email } }), // equal to the email
      body({ admin: { email, password: email.toUpperCase() } }),
      body({ tenant: { name: 'Rocket Science Ltd' }, admin: { password: 'Rocket Science Ltd' } }),
    ]
    for (const sent of cases) {
      const res = await server.request('POST', '/v1/tenants', sent)
      expectError(res, 400, 'password_too_weak')
      await assertNothingCreated(sent)
    }
  })

  test('rule: a body cannot set role, status, emailVerified, ids or policies', async () => {
    const sent = {
      tenantId: '00000000-0000-4000-8000-000000000000',
      role: 'Member',
      tenant: {
        slug: uniqueSlug(),
        name: 'Overreach Inc',
        id: '00000000-0000-4000-8000-000000000001',
        mfaPolicy: 'Required',
        authPolicy: 'PasswordlessOnly',
        passwordlessJitSignup: true,
        idpOauthEnabled: true,
        idpClientId: 'stolen',
        createdAt: '2000-01-01T00:00:00.000Z',
        deletedAt: '2000-01-01T00:00:00.000Z',
      },
      admin: {
        email: uniqueEmail('admin'),
        password: STRONG_PASSWORD,
        role: 'Member',
        status: 'Pending',
        emailVerified: true,
        tenantId: '00000000-0000-4000-8000-000000000002',
        id: '00000000-0000-4000-8000-000000000003',
        totpEnabled: true,
        passwordHash: 'x',
      },
    }
    const res = await server.request('POST', '/v1/tenants', sent)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const tenant = await tenantBySlug(server, sent.tenant.slug)
    assert.ok(tenant)
    assert.notEqual(tenant.id, sent.tenant.id)
    assert.notEqual(tenant.id, sent.tenantId)
    assert.equal(tenant.mfaPolicy, 'Disabled')
    assert.equal(tenant.authPolicy, 'PasswordOnly')
    assert.equal(tenant.passwordlessJitSignup, false)
    assert.equal(tenant.idpOauthEnabled, false)
    assert.equal(tenant.idpClientId, null)
    assert.equal(tenant.deletedAt, null)
    assert.ok(tenant.createdAt.getUTCFullYear() > 2000)
    const admin = await userByEmail(server, tenant.id, sent.admin.email)
    assert.ok(admin)
    assert.equal(admin.role, 'Admin')
    assert.equal(admin.status, 'Active')
    assert.equal(admin.emailVerified, false)
    assert.equal(admin.totpEnabled, false)
    assert.notEqual(admin.id, sent.admin.id)
    assert.ok(admin.passwordHash?.startsWith('$argon2id$'))
  })

  test('rule: a __proto__ key in the body is refused and creates nothing', async () => {
    const slug = uniqueSlug()
    const email = uniqueEmail('proto')
    for (const raw of [
      `{"tenant":{"slug":"${slug}","name":"Proto Co"},"admin":{"email":"${email}","password":"${STRONG_PASSWORD}"},"__proto__":{"role":"Member"}}`,
      `{"tenant":{"slug":"${slug}","name":"Proto Co"},"admin":{"email":"${email}","password":"${STRONG_PASSWORD}","__proto__":{"role":"Member"}}}`,
      `{"tenant":{"slug":"${slug}","name":"Proto Co"},"admin":{"email":"${email}","password":"${STRONG_PASSWORD}","constructor":{"prototype":{"role":"Member"}}}}`,
    ]) {
      const res = await server.request('POST', '/v1/tenants', undefined, { raw })
      expectError(res, 400, 'malformed_json')
      assert.equal(await tenantBySlug(server, slug), undefined)
      assert.equal(await countUsersWithEmail(server, email), 0)
    }
    assert.equal(({} as Record<string, unknown>).role, undefined, 'Object.prototype untouched')
  })

  test('the admin email is trimmed and compared without case', async () => {
    const email = uniqueEmail('Mixed.Case')
    const sent = body({ admin: { email: `  ${email.toUpperCase()} ` } })
    const res = await server.request('POST', '/v1/tenants', sent)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.email, email.toUpperCase())
    const login = await server.request('POST', `/v1/${sent.tenant.slug}/auth/login`, {
      email,
      password: STRONG_PASSWORD,
    })
    assert.equal(login.status, 200)
    assert.equal(login.body.user.id, res.body.user.id)
  })

  test('the same admin address may own tenants of its own in other workspaces', async () => {
    const email = uniqueEmail('founder')
    const a = await server.request('POST', '/v1/tenants', body({ admin: { email } }))
    const b = await server.request('POST', '/v1/tenants', body({ admin: { email } }))
    assert.equal(a.status, 200)
    assert.equal(b.status, 200)
    assert.notEqual(a.body.user.tenantId, b.body.user.tenantId)
  })

  test('malformed JSON and other content types are 400 and create nothing', async () => {
    const slug = uniqueSlug()
    const raw = `{"tenant":{"slug":"${slug}","name":"Broken"},"admin":`
    expectError(
      await server.request('POST', '/v1/tenants', undefined, { raw }),
      400,
      'malformed_json',
    )
    const form = await server.request('POST', '/v1/tenants', undefined, {
      raw: `tenant[slug]=${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expectError(form, 400, 'unsupported_media_type')
    assert.equal(await tenantBySlug(server, slug), undefined)
  })
})

describe('tenant creation rate limit (CONTRACT §6: 5 per hour per IP)', () => {
  let limited: TestServer
  before(async () => {
    limited = await startServer({
      limits: { ...GENEROUS_LIMITS, tenantCreation: { points: 2, seconds: 3600 } },
    })
  })
  after(() => limited.close())

  test('rule: tenant creation past the budget is 429 with Retry-After and creates nothing', async () => {
    const ip = randomIp()
    for (let i = 0; i < 2; i++) {
      const res = await limited.request('POST', '/v1/tenants', body({}), { ip })
      assert.equal(res.status, 200)
    }
    const sent = body({})
    const res = await limited.request('POST', '/v1/tenants', sent, { ip })
    expectError(res, 429, 'rate_limited')
    assert.ok(Number(res.headers.get('retry-after')) <= 3600)
    assert.equal(await tenantBySlug(limited, sent.tenant.slug), undefined)
    // Another client is not held back.
    const other = await limited.request('POST', '/v1/tenants', body({}), { ip: randomIp() })
    assert.equal(other.status, 200)
  })
})

describe('TENANT_CREATION_TOKEN (CONTRACT §1)', () => {
  let guarded: TestServer
  const token = 'creation-token-0123456789-abcdef'
  before(async () => {
    guarded = await startServer({ tenantCreationToken: token })
  })
  after(() => guarded.close())

  test('rule: without the creation token no tenant is created (401)', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Bearer ${token}x` },
      { authorization: token },
    ]
    for (const headers of attempts) {
      const sent = body({})
      const res = await guarded.request('POST', '/v1/tenants', sent, { headers })
      expectError(res, 401, 'tenant_creation_forbidden')
      assert.equal(await tenantBySlug(guarded, sent.tenant.slug), undefined)
    }
    const sent = body({})
    const res = await guarded.request('POST', '/v1/tenants', sent, {
      headers: { authorization: `Bearer ${token}` },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const mark = new Set<string>()
    assert.deepEqual(await actionsSince(guarded, res.body.user.tenantId, mark), [
      'SessionCreated',
      'TenantCreated',
      'UserSignup',
    ])
  })
})
