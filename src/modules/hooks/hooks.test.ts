// Blocking hooks (CONTRACT §21) over real HTTP: the hooks API with every refusal (and
// nothing changed), and the calls: before_sign_up and before_sign_in deciding, a failure
// settled by onFailure, custom_access_token's claims in the service's own access tokens
// (sign-in and refresh), reserved claims dropped. Receivers are real HTTP servers on
// 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE=true); every call's signature is checked with the
// standardwebhooks package.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { before, describe, type TestContext, test } from 'node:test'
import { expectError } from '../../../test/envelope.ts'
import { receiver, verify } from '../../../test/fixtures/webhooks.ts'
import {
  auditActions,
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { hooks, users } from '../../db/schema.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t, { webhookAllowPrivate: true })
})

const admin = (tenant: TenantFixture) => ({ token: tenant.admin.accessToken as string })

function reply(body: unknown, status = 200) {
  return (_n: number, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
}

async function addHook(tenant: TenantFixture, body: Record<string, unknown>) {
  const res = await server.request('POST', `/v1/${tenant.slug}/hooks`, body, admin(tenant))
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { hook: { id: string }; secret: string }
}

async function hookRows(tenant: TenantFixture) {
  return server.deps.db.select().from(hooks).where(eq(hooks.tenantId, tenant.tenantId))
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))
}

async function userExists(tenant: TenantFixture, email: string) {
  const rows = await server.deps.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.tenantId, tenant.tenantId), eq(users.emailNormalized, email)))
  return rows.length > 0
}

describe('hooks API', () => {
  test('create shows the secret once, lists, gets, changes and deletes, each audited', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const sink = await receiver(t, reply({ decision: 'allow' }))
    const created = await addHook(tenant, { event: 'before_sign_up', url: sink.url })
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/=]{40,}$/)
    assert.deepEqual(
      { ...created.hook, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        event: 'before_sign_up',
        url: sink.url,
        enabled: true,
        timeoutMs: 2000,
        onFailure: 'deny',
        createdAt: undefined,
        updatedAt: undefined,
      },
    )
    const token = await addHook(tenant, { event: 'custom_access_token', url: sink.url })
    assert.equal((token.hook as any).onFailure, 'allow', 'the token hook allows on failure')

    const list = await server.request('GET', `/v1/${tenant.slug}/hooks`, undefined, admin(tenant))
    assert.equal(list.status, 200)
    assert.deepEqual(
      list.body.items.map((h: any) => h.event),
      ['before_sign_up', 'custom_access_token'],
    )
    assert.equal(list.body.nextCursor, null)
    assert.equal(JSON.stringify(list.body).includes('whsec_'), false, 'never the secret again')

    const path = `/v1/${tenant.slug}/hooks/${created.hook.id}`
    const got = await server.request('GET', path, undefined, admin(tenant))
    assert.equal(got.status, 200)
    assert.equal(got.body.hook.id, created.hook.id)
    const patched = await server.request(
      'PATCH',
      path,
      { enabled: false, timeoutMs: 500, onFailure: 'allow' },
      admin(tenant),
    )
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    assert.equal(patched.body.hook.enabled, false)
    assert.equal(patched.body.hook.timeoutMs, 500)
    assert.equal(patched.body.hook.onFailure, 'allow')
    const deleted = await server.request('DELETE', path, undefined, admin(tenant))
    assert.deepEqual(deleted.body, { ok: true })
    expectError(await server.request('GET', path, undefined, admin(tenant)), 404, 'not_found')
    const actions = await auditActions(server, tenant.tenantId)
    for (const action of ['HookCreated', 'HookUpdated', 'HookDeleted']) {
      assert.ok(actions.includes(action), action)
    }
  })

  test('refusals change nothing: a second hook for an event, bad fields, unknown ids, a Member, another tenant', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const sink = await receiver(t)
    const first = await addHook(tenant, { event: 'before_sign_in', url: sink.url })
    const before = await hookRows(tenant)
    const post = (body: unknown) =>
      server.request('POST', `/v1/${tenant.slug}/hooks`, body, admin(tenant))
    expectError(await post({ event: 'before_sign_in', url: sink.url }), 409, 'hook_exists')
    for (const body of [
      { event: 'after_sign_in', url: sink.url },
      { event: 'before_sign_up', url: 'ftp://hooks.example.com/x' },
      { event: 'before_sign_up', url: 'not a url' },
      { event: 'before_sign_up', url: 'http://user:pw@127.0.0.1/x' },
      { event: 'before_sign_up', url: `${sink.url}#f` },
      { event: 'before_sign_up', url: sink.url, timeoutMs: 99 },
      { event: 'before_sign_up', url: sink.url, timeoutMs: 5001 },
      { event: 'before_sign_up', url: sink.url, onFailure: 'maybe' },
      { url: sink.url },
    ]) {
      expectError(await post(body), 400, 'validation')
    }
    const path = `/v1/${tenant.slug}/hooks/${first.hook.id}`
    expectError(
      await server.request('PATCH', path, { url: 'ftp://x.example/' }, admin(tenant)),
      400,
      'validation',
    )
    for (const id of ['nope', '018f0000-0000-7000-8000-000000000000']) {
      const other = `/v1/${tenant.slug}/hooks/${id}`
      expectError(await server.request('GET', other, undefined, admin(tenant)), 404, 'not_found')
      expectError(
        await server.request('PATCH', other, { enabled: false }, admin(tenant)),
        404,
        'not_found',
      )
      expectError(await server.request('DELETE', other, undefined, admin(tenant)), 404, 'not_found')
    }
    const member = await signup(server, tenant.slug)
    expectError(
      await server.request('GET', `/v1/${tenant.slug}/hooks`, undefined, {
        token: member.accessToken,
      }),
      403,
      'admin_required',
    )
    expectError(
      await server.request('DELETE', path, undefined, { token: member.accessToken }),
      403,
      'admin_required',
    )
    const stranger = await createTenant(server)
    expectError(
      await server.request(
        'GET',
        `/v1/${stranger.slug}/hooks/${first.hook.id}`,
        undefined,
        admin(stranger),
      ),
      404,
      'not_found',
    )
    assert.deepEqual(await hookRows(tenant), before, 'nothing changed')
  })
})

describe('before_sign_up and before_sign_in', () => {
  test('a deny refuses the sign-up with the hook’s message: nothing created, HookDenied audited; the call is signed', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const sink = await receiver(t, reply({ decision: 'deny', message: 'Sign-ups are closed.' }))
    const { secret } = await addHook(tenant, { event: 'before_sign_up', url: sink.url })
    const signups = (await auditActions(server, tenant.tenantId)).filter((a) => a === 'UserSignup')
    const email = uniqueEmail('denied')
    const res = await server.request(
      'POST',
      `/v1/${tenant.slug}/auth/signup`,
      { email, password: STRONG_PASSWORD },
      { headers: { 'user-agent': 'hook-test' } },
    )
    expectError(res, 403, 'hook_denied')
    assert.equal(res.body.message, 'Sign-ups are closed.')
    assert.equal(await userExists(tenant, email), false, 'no user created')
    assert.equal(sink.received.length, 1)
    const call = verify(secret, sink.received[0])
    assert.equal(call.event, 'before_sign_up')
    assert.deepEqual(call.tenant, { id: tenant.tenantId, slug: tenant.slug })
    assert.deepEqual(call.user, { email, role: 'Member', roles: [] })
    assert.equal(call.context.method, 'signup')
    assert.equal(call.context.userAgent, 'hook-test')
    const actions = await auditActions(server, tenant.tenantId)
    assert.ok(actions.includes('HookDenied'))
    assert.deepEqual(
      actions.filter((a) => a === 'UserSignup'),
      signups,
      'no UserSignup',
    )
  })

  test('an allow lets the sign-up through; a long message is cut to 200 characters', async (t: TestContext) => {
    const tenant = await createTenant(server)
    let decision = 'allow'
    const sink = await receiver(t, (n, res) =>
      reply({ decision, message: `${'x'.repeat(300)}\u0000` })(n, res),
    )
    await addHook(tenant, { event: 'before_sign_up', url: sink.url })
    const allowed = await signup(server, tenant.slug)
    assert.ok(allowed.accessToken)
    decision = 'deny'
    const res = await server.request('POST', `/v1/${tenant.slug}/auth/signup`, {
      email: uniqueEmail(),
      password: STRONG_PASSWORD,
    })
    expectError(res, 403, 'hook_denied')
    assert.equal(res.body.message, 'x'.repeat(200))
  })

  test('a failure follows onFailure: deny refuses with the default message, allow lets through; a timeout counts as one', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const held: ServerResponse[] = []
    const broken = await receiver(t, reply({ error: 'boom' }, 500))
    const silent = await receiver(t, (_n, res) => held.push(res))
    t.after(() => {
      for (const res of held) res.destroy()
    })
    const { hook } = await addHook(tenant, { event: 'before_sign_up', url: broken.url })
    const email = uniqueEmail()
    const refused = await server.request('POST', `/v1/${tenant.slug}/auth/signup`, {
      email,
      password: STRONG_PASSWORD,
    })
    expectError(refused, 403, 'hook_denied')
    assert.equal(refused.body.message, 'This was refused by the workspace.')
    assert.equal(await userExists(tenant, email), false)

    const path = `/v1/${tenant.slug}/hooks/${hook.id}`
    await server.request('PATCH', path, { url: silent.url, timeoutMs: 200 }, admin(tenant))
    const started = performance.now()
    const timedOut = await server.request('POST', `/v1/${tenant.slug}/auth/signup`, {
      email,
      password: STRONG_PASSWORD,
    })
    expectError(timedOut, 403, 'hook_denied')
    assert.ok(performance.now() - started < 4000, 'the wait ends at the hook’s timeout')

    await server.request('PATCH', path, { onFailure: 'allow' }, admin(tenant))
    const through = await server.request('POST', `/v1/${tenant.slug}/auth/signup`, {
      email,
      password: STRONG_PASSWORD,
    })
    assert.equal(through.status, 200, JSON.stringify(through.body))
  })

  test('before_sign_in refuses a right password (the try is given back), told the user and method; disabled, it is not called', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const member = await signup(server, tenant.slug)
    const sink = await receiver(t, reply({ decision: 'deny' }))
    const { hook, secret } = await addHook(tenant, { event: 'before_sign_in', url: sink.url })
    const login = () =>
      server.request('POST', `/v1/${tenant.slug}/auth/login`, {
        email: member.email,
        password: member.password,
      })
    expectError(await login(), 403, 'hook_denied')
    const call = verify(secret, sink.received[0])
    assert.equal(call.event, 'before_sign_in')
    assert.equal(call.user.id, member.user.id)
    assert.equal(call.user.email, member.email)
    assert.equal(call.context.method, 'password')
    const wrong = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: member.email,
      password: 'not-the-password-1234',
    })
    expectError(wrong, 401, 'invalid_credentials')
    assert.equal(sink.received.length, 1, 'a wrong password never reaches the hook')
    await server.request(
      'PATCH',
      `/v1/${tenant.slug}/hooks/${hook.id}`,
      { enabled: false },
      admin(tenant),
    )
    assert.equal((await login()).status, 200)
    assert.equal(sink.received.length, 1)
  })

  test('a passwordless JIT sign-up refused when the code is requested: still ok, no user, HookDenied', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const settings = await server.request(
      'PATCH',
      `/v1/${tenant.slug}/tenant`,
      { authPolicy: 'PasswordAndPasswordless', passwordlessJitSignup: true },
      admin(tenant),
    )
    assert.equal(settings.status, 200, JSON.stringify(settings.body))
    const sink = await receiver(t, reply({ decision: 'deny' }))
    await addHook(tenant, { event: 'before_sign_up', url: sink.url })
    const email = uniqueEmail('jit')
    const res = await server.request('POST', `/v1/${tenant.slug}/auth/request-login-code`, {
      email,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true })
    assert.equal(sink.received.length, 1)
    assert.equal(await userExists(tenant, email), false)
    assert.ok((await auditActions(server, tenant.tenantId)).includes('HookDenied'))
  })
})

describe('custom_access_token', () => {
  test('claims are merged into the access token at sign-in and refresh; reserved claims are dropped', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const member = await signup(server, tenant.slug)
    const sink = await receiver(
      t,
      reply({ claims: { plan: 'pro', seats: 3, sub: 'someone-else', role: 'Admin', tid: 'x' } }),
    )
    const { secret } = await addHook(tenant, { event: 'custom_access_token', url: sink.url })
    const login = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: member.email,
      password: member.password,
    })
    assert.equal(login.status, 200, JSON.stringify(login.body))
    const claims = claimsOf(login.body.accessToken)
    assert.equal(claims.plan, 'pro')
    assert.equal(claims.seats, 3)
    assert.equal(claims.sub, member.user.id, 'reserved claims are the service’s')
    assert.equal(claims.role, 'Member')
    assert.equal(claims.tid, tenant.tenantId)
    const call = verify(secret, sink.received[0])
    assert.equal(call.event, 'custom_access_token')
    assert.equal(call.user.id, member.user.id)
    const me = await server.request('GET', `/v1/${tenant.slug}/me`, undefined, {
      token: login.body.accessToken,
    })
    assert.equal(me.status, 200, 'the token still opens the API')

    const refreshed = await server.request('POST', `/v1/${tenant.slug}/auth/refresh`, {
      refreshToken: login.body.refreshToken,
    })
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body))
    assert.equal(claimsOf(refreshed.body.accessToken).plan, 'pro')
    assert.equal(sink.received.length, 2)
  })

  test('more than 4 KiB of claims is a failure: under allow no claims are added, under deny no token', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const member = await signup(server, tenant.slug)
    const sink = await receiver(t, reply({ claims: { big: 'x'.repeat(5000) } }))
    const { hook } = await addHook(tenant, { event: 'custom_access_token', url: sink.url })
    const login = () =>
      server.request('POST', `/v1/${tenant.slug}/auth/login`, {
        email: member.email,
        password: member.password,
      })
    const allowed = await login()
    assert.equal(allowed.status, 200)
    assert.equal(claimsOf(allowed.body.accessToken).big, undefined)
    await server.request(
      'PATCH',
      `/v1/${tenant.slug}/hooks/${hook.id}`,
      { onFailure: 'deny' },
      admin(tenant),
    )
    expectError(await login(), 403, 'hook_denied')
  })
})
