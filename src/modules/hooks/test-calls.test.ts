// A hook's test call and its last calls (CONTRACT §21, issue 32) over real HTTP: POST
// hooks/{id}/test sends a sample of the hook's event, marked `test: true` and about no user,
// by the real call's path (signed: checked with the standardwebhooks package; through the
// egress guard; within timeoutMs) and answers what it came to without changing anyone;
// GET hooks/{id}/calls lists the newest 20 calls, real and test, with no body, claim,
// message or user in them. Receivers are real HTTP servers on 127.0.0.1: one that answers,
// one that hangs, one that fails; an internal address is refused by the guard of a server
// that allows none.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { before, describe, type TestContext, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { receiver, verify } from '../../../test/fixtures/webhooks.ts'
import {
  auditActions,
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { hookCallLog } from '../../db/schema.ts'
import { TEST_USER_EMAIL } from './call.ts'

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

async function addHook(s: TestServer, tenant: TenantFixture, body: Record<string, unknown>) {
  const res = await s.request('POST', `/v1/${tenant.slug}/hooks`, body, admin(tenant))
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { hook: { id: string }; secret: string }
}

const sendTest = (s: TestServer, tenant: TenantFixture, id: string) =>
  s.request('POST', `/v1/${tenant.slug}/hooks/${id}/test`, undefined, admin(tenant))

async function calls(s: TestServer, tenant: TenantFixture, id: string) {
  const res = await s.request(
    'GET',
    `/v1/${tenant.slug}/hooks/${id}/calls`,
    undefined,
    admin(tenant),
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items as Record<string, unknown>[]
}

async function callRows(s: TestServer, tenantId: string, hookId: string) {
  return s.deps.db
    .select()
    .from(hookCallLog)
    .where(and(eq(hookCallLog.tenantId, tenantId), eq(hookCallLog.hookId, hookId)))
}

/** Every row of the tenant but the hooks' call lines, which a test call writes. */
async function allButCalls(s: TestServer, tenantId: string) {
  const { hookCalls: _, ...rest } = await tenantSnapshot(s, tenantId)
  return rest
}

describe('POST hooks/{id}/test', () => {
  test('a sample of each event, signed and marked test, about no user; its answer told back and nothing else changed', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const sink = await receiver(t, (n, res) =>
      [
        reply({ decision: 'deny', message: `Closed.\u0000${'x'.repeat(300)}` }),
        reply({ decision: 'allow' }),
        reply({ claims: { plan: 'pro', sub: 'someone-else', tid: 'x' } }),
      ][(n - 1) % 3]?.(n, res),
    )
    const signUp = await addHook(server, tenant, { event: 'before_sign_up', url: sink.url })
    const signIn = await addHook(server, tenant, {
      event: 'before_sign_in',
      url: sink.url,
      enabled: false,
    })
    const token = await addHook(server, tenant, { event: 'custom_access_token', url: sink.url })
    const before = await allButCalls(server, tenant.tenantId)

    const denied = await sendTest(server, tenant, signUp.hook.id)
    assert.equal(denied.status, 200, JSON.stringify(denied.body))
    assert.equal(denied.body.outcome, 'deny')
    assert.equal(denied.body.status, 200)
    assert.equal(
      denied.body.message,
      `Closed. ${'x'.repeat(192)}`,
      'cleaned and cut as a real deny',
    )
    assert.equal(typeof denied.body.durationMs, 'number')
    const first = verify(signUp.secret, sink.received[0])
    assert.deepEqual(first, {
      event: 'before_sign_up',
      tenant: { id: tenant.tenantId, slug: tenant.slug },
      user: { email: TEST_USER_EMAIL, role: 'Member', roles: [] },
      context: { ip: '192.0.2.1', userAgent: 'tenant-auth-hooks/1 (test call)', method: 'signup' },
      test: true,
    })

    // A disabled hook can be tried before it is enabled.
    const allowed = await sendTest(server, tenant, signIn.hook.id)
    assert.deepEqual(
      { ...allowed.body, durationMs: undefined },
      { outcome: 'allow', status: 200, durationMs: undefined },
    )
    const second = verify(signIn.secret, sink.received[1])
    assert.equal(second.event, 'before_sign_in')
    assert.equal(second.test, true)
    assert.equal(second.user.id, '00000000-0000-0000-0000-000000000000')
    assert.equal(second.context.method, 'password')

    const claims = await sendTest(server, tenant, token.hook.id)
    assert.equal(claims.body.outcome, 'allow')
    assert.deepEqual(claims.body.claims, { plan: 'pro' }, 'the reserved claims dropped')
    assert.deepEqual(claims.body.droppedClaims, ['sub', 'tid'])
    assert.equal(verify(token.secret, sink.received[2]).event, 'custom_access_token')

    assert.deepEqual(await allButCalls(server, tenant.tenantId), before, 'nothing else changed')
    const actions = await auditActions(server, tenant.tenantId)
    assert.ok(!actions.includes('HookDenied'), 'a test deny is no denial')
    assert.equal(
      server.deps.hookCalls.totals.get('before_sign_up deny'),
      undefined,
      'the metrics count real calls only',
    )
    assert.deepEqual(
      (await calls(server, tenant, signUp.hook.id)).map((c) => [c.outcome, c.status, c.test]),
      [['deny', 200, true]],
    )
  })

  test('a receiver that hangs is a timeout within timeoutMs; a 500 is an error with its status', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const held: ServerResponse[] = []
    const silent = await receiver(t, (_n, res) => held.push(res))
    t.after(() => {
      for (const res of held) res.destroy()
    })
    const broken = await receiver(t, reply({ error: 'boom' }, 500))
    const slow = await addHook(server, tenant, {
      event: 'before_sign_in',
      url: silent.url,
      timeoutMs: 200,
    })
    const failing = await addHook(server, tenant, { event: 'before_sign_up', url: broken.url })

    const started = performance.now()
    const timedOut = await sendTest(server, tenant, slow.hook.id)
    assert.ok(performance.now() - started < 3000, 'the wait ends at the hook’s timeout')
    assert.equal(timedOut.status, 200, JSON.stringify(timedOut.body))
    assert.equal(timedOut.body.outcome, 'timeout')
    assert.equal(timedOut.body.status, undefined)
    assert.equal(timedOut.body.error, 'no answer within 200 ms')
    assert.ok(timedOut.body.durationMs >= 195, String(timedOut.body.durationMs))
    assert.equal(silent.received.length, 1)

    const refused = await sendTest(server, tenant, failing.hook.id)
    assert.deepEqual(
      { ...refused.body, durationMs: undefined },
      { outcome: 'error', status: 500, error: 'HTTP 500', durationMs: undefined },
    )
    assert.equal(JSON.stringify(refused.body).includes('boom'), false, 'not the answer’s words')
    assert.deepEqual(
      (await calls(server, tenant, slow.hook.id)).map((c) => [c.outcome, c.error, c.status]),
      [['timeout', 'no answer within 200 ms', undefined]],
    )
  })

  test('an internal address is refused by the egress guard: an error that names no address, nothing sent', async (t: TestContext) => {
    const guarded = await startTestServer(t, { webhookAllowPrivate: false })
    const tenant = await createTenant(guarded)
    const sink = await receiver(t, reply({ decision: 'allow' }))
    const { hook } = await addHook(guarded, tenant, {
      event: 'before_sign_in',
      url: `https://127.0.0.1:${sink.port}/hook`,
    })
    const res = await sendTest(guarded, tenant, hook.id)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.outcome, 'error')
    assert.equal(res.body.status, undefined)
    assert.equal(
      res.body.error,
      'refused: the address is a loopback, private, link-local or unspecified address',
    )
    assert.equal(sink.received.length, 0)
    const [line] = await calls(guarded, tenant, hook.id)
    assert.equal(line?.error, res.body.error)
  })

  test('refusals change nothing: another tenant’s hook, unknown and malformed ids, a Member', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const stranger = await createTenant(server)
    const sink = await receiver(t, reply({ decision: 'allow' }))
    const { hook } = await addHook(server, tenant, { event: 'before_sign_in', url: sink.url })
    const member = await signup(server, tenant.slug)
    const before = await tenantSnapshot(server, tenant.tenantId)
    const strangerBefore = await tenantSnapshot(server, stranger.tenantId)
    for (const method of ['POST', 'GET'] as const) {
      const path = (slug: string, id: string) =>
        `/v1/${slug}/hooks/${id}/${method === 'POST' ? 'test' : 'calls'}`
      expectError(
        await server.request(method, path(stranger.slug, hook.id), undefined, admin(stranger)),
        404,
        'not_found',
      )
      for (const id of ['nope', '018f0000-0000-7000-8000-000000000000']) {
        expectError(
          await server.request(method, path(tenant.slug, id), undefined, admin(tenant)),
          404,
          'not_found',
        )
      }
      expectError(
        await server.request(method, path(tenant.slug, hook.id), undefined, {
          token: member.accessToken,
        }),
        403,
        'admin_required',
      )
    }
    assert.equal(sink.received.length, 0, 'no call was made')
    assert.deepEqual(await tenantSnapshot(server, tenant.tenantId), before)
    assert.deepEqual(await tenantSnapshot(server, stranger.tenantId), strangerBefore)
  })
})

describe('GET hooks/{id}/calls', () => {
  test('real and test calls, newest first, with no body, message or user stored', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const member = await signup(server, tenant.slug)
    const message = 'Not on a Sunday, Ada.'
    const sink = await receiver(t, reply({ decision: 'deny', message }))
    const { hook } = await addHook(server, tenant, { event: 'before_sign_in', url: sink.url })
    assert.deepEqual(await calls(server, tenant, hook.id), [])

    const login = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: member.email,
      password: member.password,
    })
    expectError(login, 403, 'hook_denied')
    assert.equal((await sendTest(server, tenant, hook.id)).body.outcome, 'deny')

    const listed = await calls(server, tenant, hook.id)
    assert.deepEqual(
      listed.map((c) => [c.outcome, c.status, c.test, c.error]),
      [
        ['deny', 200, true, undefined],
        ['deny', 200, false, undefined],
      ],
    )
    for (const c of listed) {
      assert.deepEqual(Object.keys(c).sort(), ['at', 'durationMs', 'outcome', 'status', 'test'])
      assert.ok(Date.parse(c.at as string) <= server.clock.now().getTime())
    }
    const stored = JSON.stringify(await callRows(server, tenant.tenantId, hook.id))
    for (const secret of [message, member.email, member.user.id, TEST_USER_EMAIL]) {
      assert.equal(stored.includes(secret), false, `no ${secret} is stored`)
    }
  })

  test('at most 20 kept per hook: each write deletes what is past the newest 20, of that hook only', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const sink = await receiver(t, reply({ decision: 'allow' }))
    const busy = await addHook(server, tenant, { event: 'before_sign_in', url: sink.url })
    const quiet = await addHook(server, tenant, { event: 'before_sign_up', url: sink.url })
    await sendTest(server, tenant, quiet.hook.id)
    for (let i = 0; i < 22; i++) {
      const res = await sendTest(server, tenant, busy.hook.id)
      assert.equal(res.body.outcome, 'allow')
    }
    const rows = await callRows(server, tenant.tenantId, busy.hook.id)
    assert.equal(rows.length, 20, 'the table holds 20, not 22')
    const listed = await calls(server, tenant, busy.hook.id)
    assert.equal(listed.length, 20)
    const newest = [...rows].sort((a, b) => (a.id < b.id ? 1 : -1))
    assert.deepEqual(
      listed.map((c) => c.at),
      newest.map((r) => r.at.toISOString()),
      'newest first, the oldest two gone',
    )
    assert.equal((await callRows(server, tenant.tenantId, quiet.hook.id)).length, 1)

    // A deleted hook's calls go with it.
    const gone = await server.request(
      'DELETE',
      `/v1/${tenant.slug}/hooks/${busy.hook.id}`,
      undefined,
      admin(tenant),
    )
    assert.equal(gone.status, 200)
    assert.equal((await callRows(server, tenant.tenantId, busy.hook.id)).length, 0)
  })
})
