// Faults, scenario 4 (CONTRACT §1: "SIGTERM drains in-flight requests and exits 0"): the
// service gets SIGTERM in the middle of a load of signups, refreshes and /me. Requests it
// was already serving finish with their 2xx (and what they acknowledged is in the
// database), requests sent after the signal are refused (connection refused or reset, or
// a 503 with the error envelope of CONTRACT §3), and the process exits 0 within 10 s.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  call,
  createTenant,
  inBatches,
  LONG,
  ms,
  PASSWORD,
  type Reply,
  randomIp,
  report,
  SKIP,
  signup,
  uniqueEmail,
} from './client.ts'
import { query } from './invariants.ts'
import { Load, pick, sleep, statusSummary, until } from './load.ts'
import { FaultWorld } from './procs.ts'

const SIZE = LONG ? { users: 24, width: 16, warmMs: 4000 } : { users: 8, width: 12, warmMs: 1500 }
const EXIT_BOUND_MS = 10_000
// A request sent this long before the signal has surely reached the server: it must finish.
const IN_FLIGHT_MARGIN_MS = 100
// Past this long after the signal, the process has surely seen it: nothing new is served.
const SIGNAL_GRACE_MS = 250

let world: FaultWorld
before(async () => {
  if (SKIP) return
  world = await FaultWorld.create()
})
after(() => world?.teardown())

const describe = (r: Reply & { kind?: string }) =>
  `${r.kind} ${r.status} ${r.error ?? JSON.stringify(r.body)}`

test('SIGTERM under load: in-flight requests finish, new ones are refused, exit 0', {
  skip: SKIP,
}, async () => {
  const { service } = await world.startService()
  const base = service.base
  const tenant = await createTenant(base)
  const { slug } = tenant
  const range = Array.from({ length: SIZE.users }, (_, i) => i)
  const sessions = (await inBatches(range, 8, () => signup(base, slug))).map((s) => ({
    ...s,
    busy: false,
  }))
  const signedUp = new Map<string, string>()

  let signalled = false
  const load = new Load({ width: SIZE.width, maxOps: 20_000, maxMs: 60_000 }, async () => {
    const r = Math.random()
    let reply: Reply
    if (r < 0.4) {
      const email = uniqueEmail()
      reply = load.record(
        'signup',
        await call(base, 'POST', `/v1/${slug}/auth/signup`, {
          ip: randomIp(),
          body: { email, password: PASSWORD },
        }),
      )
      if (reply.status === 200) signedUp.set(reply.body.user.id, email)
    } else {
      const s = pick(sessions.filter((x) => !x.busy))
      if (!s) return
      s.busy = true
      if (r < 0.7) {
        reply = load.record(
          'refresh',
          await call(base, 'POST', `/v1/${slug}/auth/refresh`, {
            ip: randomIp(),
            body: { refreshToken: s.refreshToken },
          }),
        )
        if (reply.status === 200) s.refreshToken = reply.body.refreshToken
      } else {
        reply = load.record(
          'me',
          await call(base, 'GET', `/v1/${slug}/me`, { token: s.accessToken }),
        )
      }
      s.busy = false
    }
    // Once the port is closed, failures come back at once: do not spin on them.
    if (signalled && reply.status === 0) await sleep(20)
  })

  await sleep(SIZE.warmMs)
  // The signal goes while a request has been in flight for a while: surely at the server.
  await until(() => load.oldestInFlightMs() > 2 * IN_FLIGHT_MARGIN_MS, 5000, 2)
  const inFlight = load.inFlight
  const signalAt = performance.now()
  signalled = true
  service.child.kill('SIGTERM')
  const exit = await Promise.race([service.exit, sleep(EXIT_BOUND_MS).then(() => undefined)])
  const exitMs = performance.now() - signalAt
  await sleep(300) // new requests meet the closed port for a while
  await load.stop()

  const before = load.startedBetween(0, signalAt - IN_FLIGHT_MARGIN_MS)
  const drained = before.filter((r) => r.startedAt + r.ms > signalAt)
  const late = load.startedBetween(signalAt + SIGNAL_GRACE_MS, Number.POSITIVE_INFINITY)
  const lateRefused = late.filter((r) => r.status === 0 || r.status === 503)
  report('sigterm', {
    acknowledged: load.acknowledged(),
    'in flight at the signal': inFlight,
    'finished after the signal': `${drained.length} (${statusSummary(drained)})`,
    'sent after the signal': `${late.length} (${statusSummary(late)})`,
    '503 while closing': load.replies.filter((r) => r.status === 503).length,
    exit: exit ? `code ${exit.code} after ${ms(exitMs)}` : `none within ${ms(EXIT_BOUND_MS)}`,
  })

  assert.ok(exit, `the process exits within ${EXIT_BOUND_MS} ms of SIGTERM`)
  assert.equal(exit.code, 0, `exit code 0; output:\n${service.output()}`)
  assert.ok(drained.length > 0, 'some requests were in flight when the signal came')
  assert.deepEqual(
    before.filter((r) => r.status < 200 || r.status >= 300).map(describe),
    [],
    'every request sent before the signal finished with its 2xx',
  )
  assert.ok(late.length > 0, 'requests were sent after the signal')
  assert.deepEqual(
    late.filter((r) => !lateRefused.includes(r)).map(describe),
    [],
    'requests sent after the signal are refused (connection refused or reset, or 503)',
  )

  // What was acknowledged before and during the drain is in the database.
  const rows = await query(world.pg.url, 'SELECT id, email FROM users WHERE tenant_id = $1', [
    tenant.tenantId,
  ])
  const kept = new Map(rows.map((u) => [u.id as string, u.email as string]))
  for (const [id, email] of signedUp) assert.equal(kept.get(id), email, `signup ${email} is kept`)
  // Last, so that the checks above run first: Fastify's own 503 while closing
  // (return503OnClosing) must still be the envelope of CONTRACT §3.
  const bare = load.replies.filter((r) => r.status === 503 && r.body?.code !== 'UNAVAILABLE')
  assert.deepEqual(
    [...new Set(bare.map(describe))],
    [],
    `a 503 carries the error envelope (CONTRACT §3: every error); ${bare.length} did not`,
  )
})
