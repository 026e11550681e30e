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
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { before, describe, type Mock, type TestContext, test } from 'node:test'
import { setUser, tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { freePort } from '../../../test/fixtures/ports.ts'
import { mismatchedTlsReceiver } from '../../../test/fixtures/tls.ts'
import { receiver, verify } from '../../../test/fixtures/webhooks.ts'
import {
  auditActions,
  createTenant,
  GENEROUS_LIMITS,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { hookCallLog } from '../../db/schema.ts'
import { EGRESS_FAILURES } from '../../lib/egress-failure.ts'
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

/** A TCP server on 127.0.0.1 that greets each connection with `greet`; closed when `t` ends. */
async function tcpServer(t: TestContext, greet: (socket: Socket) => void) {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.resume()
    greet(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { port: (server.address() as AddressInfo).port }
}

/** The `hook call failed` lines a mocked server-log `warn` was given, with their fields. */
function failureLines(warned: Mock<(fields: object, message: string) => void>) {
  return warned.mock.calls
    .filter((call) => call.arguments[1].startsWith('hook call failed'))
    .map((call) => ({
      ...(call.arguments[0] as { err: unknown; hookId: string; test: boolean }),
      message: call.arguments[1],
    }))
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

  test('rule: a failed call names no address, port or certificate name (a closed port, a name that does not resolve, a certificate for other hosts), the answer and the calls log alike; the error itself goes to the server log', async (t: TestContext) => {
    const tenant = await createTenant(server)
    // Signed up before the hooks exist: the before_sign_up one below would refuse it.
    const member = await signup(server, tenant.slug)
    const closed = await freePort()
    const tls = await mismatchedTlsReceiver(t, ['DNS:internal.corp', 'IP:10.1.2.3'])
    const banner = await tcpServer(t, (socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n'))
    const huge = await receiver(t, reply({ decision: 'allow', padding: 'x'.repeat(20_000) }))
    const spare = await createTenant(server)
    const warned = t.mock.method(server.app.log, 'warn', (_fields: object, _message: string) => {})
    const cases: {
      event: string
      on?: TenantFixture
      url: string
      error: string
      thrown: RegExp
      secrets: string[]
    }[] = [
      {
        event: 'before_sign_in',
        url: `http://127.0.0.1:${closed}/hook`,
        error: EGRESS_FAILURES.connection,
        thrown: /ECONNREFUSED/,
        secrets: ['127.0.0.1', String(closed), 'ECONNREFUSED'],
      },
      {
        event: 'before_sign_up',
        // RFC 6761 §6.4: no name under .invalid resolves.
        url: 'http://db.internal-corp.invalid:5432/hook',
        error: EGRESS_FAILURES.unresolved,
        thrown: /ENOTFOUND|EAI_AGAIN/,
        secrets: ['internal-corp', '5432', 'ENOTFOUND', 'getaddrinfo'],
      },
      {
        event: 'custom_access_token',
        url: tls.url,
        error: EGRESS_FAILURES.tls,
        thrown: /internal\.corp/,
        secrets: ['internal.corp', '10.1.2.3', 'localhost', String(tls.port), 'altnames'],
      },
      // An open port that speaks something else than HTTP (a banner, as SSH sends).
      {
        event: 'before_sign_in',
        on: spare,
        url: `http://127.0.0.1:${banner.port}/hook`,
        error: EGRESS_FAILURES.notHttp,
        thrown: /Parse Error|HPE_/,
        secrets: ['127.0.0.1', String(banner.port), 'OpenSSH', 'Parse Error', 'HPE_'],
      },
      // egress.ts's own message, which names no address, stays as it is.
      {
        event: 'before_sign_up',
        on: spare,
        url: huge.url,
        error: 'the answer is larger than 16384 bytes',
        thrown: /larger than/,
        secrets: ['127.0.0.1', String(huge.port)],
      },
    ]
    const ids: Record<string, string> = {}
    for (const c of cases) {
      const owner = c.on ?? tenant
      const { hook } = await addHook(server, owner, { event: c.event, url: c.url, timeoutMs: 5000 })
      if (owner === tenant) ids[c.event] = hook.id
      warned.mock.resetCalls()
      const res = await sendTest(server, owner, hook.id)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.deepEqual(
        { ...res.body, durationMs: undefined },
        { outcome: 'error', error: c.error, durationMs: undefined },
        c.url,
      )
      const listed = await calls(server, owner, hook.id)
      assert.deepEqual(
        listed.map((line) => [line.outcome, line.error, line.status]),
        [['error', c.error, undefined]],
      )
      const stored = JSON.stringify(await callRows(server, owner.tenantId, hook.id))
      for (const shown of [JSON.stringify(res.body), JSON.stringify(listed), stored]) {
        for (const secret of c.secrets) {
          assert.equal(shown.includes(secret), false, `${secret} is not shown: ${shown}`)
        }
      }
      // The operator's log has the error as the network library threw it.
      const [line] = failureLines(warned)
      assert.ok(line, 'logged')
      assert.match(String(line.err), c.thrown)
      assert.deepEqual([line.hookId, line.test], [hook.id, true])
      assert.equal(line.message, `hook call failed: ${c.error}`)
    }
    assert.equal(tls.received, 0, 'no request got past the handshake')

    // A real sign-in's call: the same phrase in the calls log, the error in the server log.
    warned.mock.resetCalls()
    const login = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: member.email,
      password: member.password,
    })
    expectError(login, 403, 'hook_denied')
    const [real] = await calls(server, tenant, ids.before_sign_in as string)
    assert.deepEqual([real?.test, real?.error], [false, EGRESS_FAILURES.connection])
    const [logged] = failureLines(warned)
    assert.ok(logged, 'logged')
    assert.match(String(logged.err), /ECONNREFUSED/)
    assert.deepEqual([logged.hookId, logged.test], [ids.before_sign_in, false])
  })

  test('rule: a tenant has 10 test calls a minute: the 11th is 429 with Retry-After, sends nothing and logs nothing; another tenant keeps its own', async (t: TestContext) => {
    const limited = await startTestServer(t, {
      webhookAllowPrivate: true,
      limits: { ...GENEROUS_LIMITS, hookTestCalls: { points: 10, seconds: 60 } },
    })
    const tenant = await createTenant(limited)
    const stranger = await createTenant(limited)
    // A second admin (signed in before the hooks exist, which would be called): the ten
    // are the tenant's, across its hooks and admins.
    const otherAdmin = await signup(limited, tenant.slug)
    await setUser(limited, tenant.tenantId, otherAdmin.user.id, { role: 'Admin' })
    const asOther = await limited.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: otherAdmin.email,
      password: otherAdmin.password,
    })
    assert.equal(asOther.status, 200, JSON.stringify(asOther.body))
    const sink = await receiver(t, reply({ decision: 'allow' }))
    const first = await addHook(limited, tenant, { event: 'before_sign_in', url: sink.url })
    const second = await addHook(limited, tenant, { event: 'before_sign_up', url: sink.url })
    const theirs = await addHook(limited, stranger, { event: 'before_sign_in', url: sink.url })
    for (let i = 0; i < 10; i++) {
      const res =
        i % 2 === 0
          ? await sendTest(limited, tenant, (i < 5 ? first : second).hook.id)
          : await limited.request(
              'POST',
              `/v1/${tenant.slug}/hooks/${(i < 5 ? first : second).hook.id}/test`,
              undefined,
              { token: asOther.body.accessToken },
            )
      assert.equal(res.status, 200, `call ${i + 1}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.outcome, 'allow')
    }
    assert.equal(sink.received.length, 10)
    const before = await tenantSnapshot(limited, tenant.tenantId)
    const refused = await sendTest(limited, tenant, second.hook.id)
    expectError(refused, 429, 'rate_limited')
    const retryAfter = Number(refused.headers.get('retry-after'))
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter))
    assert.equal(sink.received.length, 10, 'the 11th sent nothing')
    assert.deepEqual(await tenantSnapshot(limited, tenant.tenantId), before, 'nothing logged')
    // An unknown hook is still 404: the point is taken once the hook is found.
    expectError(
      await sendTest(limited, tenant, '018f0000-0000-7000-8000-000000000000'),
      404,
      'not_found',
    )
    const other = await sendTest(limited, stranger, theirs.hook.id)
    assert.equal(other.status, 200, 'another tenant keeps its own budget')
    assert.equal(sink.received.length, 11)
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
