// Faults, scenario 3 (CONTRACT §3 and §8): PostgreSQL stops under load (a clean `fast`
// shutdown, then a crash-like `immediate` one) and starts again a few seconds later. While
// it is down, every request is answered in bounded time (well under the 35 s request
// timeout): 2xx when it needs no database, else 503 with the envelope
// `{code:'UNAVAILABLE', message, details:{reason:'unavailable'}}`, never a 500 or a dropped
// connection; /ready answers 503. Once PostgreSQL is back the service recovers by itself.
// Then database connections are killed under load (pg_terminate_backend, as a failover or
// a DBA would): the requests on them may fail with 503, the service lives on. Last,
// PostgreSQL is frozen (SIGSTOP: connections open, nothing answers, as behind a network
// partition) for longer than the 35 s bound: no request may wait that long.
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
  type Session,
  SKIP,
  signup,
  type Tenant,
  uniqueEmail,
} from './client.ts'
import { query } from './invariants.ts'
import { Load, pick, sleep, statusSummary, until } from './load.ts'
import { FaultWorld, type Service } from './procs.ts'

const SIZE = LONG
  ? { users: 24, width: 16, warmMs: 2000, downMs: 8000, afterMs: 3000, killMs: 8000 }
  : { users: 8, width: 8, warmMs: 1000, downMs: 3000, afterMs: 1000, killMs: 2500 }
/** CONTRACT §8: a request is answered by 35 s at the latest, whatever happens behind it. */
const LATENCY_BOUND_MS = 35_000
const RECOVERY_BOUND_MS = 10_000
/** Longer than the bound, so that a request waiting on the database would break it. */
const FREEZE_MS = LATENCY_BOUND_MS + (LONG ? 5000 : 2000)

let world: FaultWorld
let service: Service
let tenant: Tenant
let sessions: (Session & { uncertain: boolean; busy: boolean })[]

/** A test whose fault killed the service leaves the next one a fresh instance. */
async function ensureService(): Promise<void> {
  if (service?.running) return
  service = (await world.startService()).service
}

before(async () => {
  if (SKIP) return
  world = await FaultWorld.create()
  await ensureService()
  tenant = await createTenant(service.base)
  const range = Array.from({ length: SIZE.users }, (_, i) => i)
  sessions = (await inBatches(range, 8, () => signup(service.base, tenant.slug))).map((s) => ({
    ...s,
    uncertain: false,
    busy: false,
  }))
})
after(() => world?.teardown())

for (const mode of ['fast', 'immediate'] as const) {
  test(`PostgreSQL stopped (${mode}) under load: 503 in bounded time, then recovery`, {
    skip: SKIP,
  }, async () => {
    await ensureService()
    const base = service.base
    const load = mixedLoad(base)
    await sleep(SIZE.warmMs)
    const stopAt = performance.now()
    await world.pg.stop(mode)
    const downAt = performance.now()
    const ready: Reply[] = []
    while (performance.now() - downAt < SIZE.downMs) {
      ready.push(await call(base, 'GET', '/ready'))
      await sleep(200)
    }
    const startAt = performance.now()
    await world.pg.start()
    const upAt = performance.now()

    // Recovered: /ready is 200 and a request that reads the database is 2xx again.
    const probe = pick(sessions)!
    const recovered = await until(
      async () => {
        const [r, me] = await Promise.all([
          call(base, 'GET', '/ready'),
          call(base, 'GET', `/v1/${tenant.slug}/me`, { token: probe.accessToken }),
        ])
        return (r.status === 200 && me.status === 200) || !service.running
      },
      RECOVERY_BOUND_MS + 5000,
      100,
    )
    const recoveredAt = performance.now()
    await sleep(SIZE.afterMs)
    await load.stop()

    const during = load.startedBetween(stopAt, recoveredAt)
    const afterwards = load.startedBetween(recoveredAt, Number.POSITIVE_INFINITY)
    const maxDuring = Math.max(0, ...during.map((r) => r.ms), ...ready.map((r) => r.ms))
    report(`postgres (${mode})`, {
      acknowledged: load.acknowledged(),
      'while down': `${during.length} requests (${statusSummary(during)})`,
      'max latency while down': ms(maxDuring),
      outage: ms(startAt - stopAt),
      'recovered after PostgreSQL came back in':
        recovered && service.running ? ms(recoveredAt - upAt) : 'never',
      'after recovery': statusSummary(afterwards),
    })

    assertAlive()
    assert.deepEqual(
      sample(during.filter((r) => !isOk(r) && !isUnavailable(r)).map(describe)),
      [],
      'while PostgreSQL is down, a request answers 2xx or 503 UNAVAILABLE (reason unavailable)',
    )
    assert.ok(during.some(isUnavailable), 'requests that need the database answered 503')
    assert.ok(maxDuring <= LATENCY_BOUND_MS, `max latency ${ms(maxDuring)} within the timeout`)
    assert.deepEqual(
      sample(ready.filter((r) => r.status !== 503).map(describe)),
      [],
      '/ready answers 503 while PostgreSQL is down',
    )
    assert.ok(recovered, `2xx again within ${RECOVERY_BOUND_MS} ms of PostgreSQL coming back`)
    assert.ok(recoveredAt - upAt <= RECOVERY_BOUND_MS, `recovered in ${ms(recoveredAt - upAt)}`)
    assert.ok(afterwards.length > 0, 'the load ran on after the recovery')
    assert.deepEqual(
      sample(afterwards.filter((r) => !isOk(r)).map(describe)),
      [],
      'after the recovery every request is 2xx again (no broken connection kept in the pool)',
    )
  })
}

test('database connections killed under load: those requests may 503, the service lives', {
  skip: SKIP,
}, async () => {
  await ensureService()
  const load = mixedLoad(service.base)
  await sleep(SIZE.warmMs / 2)
  // Every 50 ms, every connection of the service is terminated, whatever it is doing:
  // idle in the pool, running a query, or inside a transaction between two statements.
  const killStart = performance.now()
  let terminated = 0
  while (performance.now() - killStart < SIZE.killMs && service.running) {
    const rows = await query(
      world.pg.url,
      `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
          AND datname = current_database()`,
    )
    terminated += rows.filter((r) => r.done).length
    await sleep(50)
  }
  const killEnd = performance.now()
  const recovered = await until(async () => {
    const r = await call(service.base, 'GET', '/ready')
    return r.status === 200 || !service.running
  }, RECOVERY_BOUND_MS)
  const recoveredAt = performance.now()
  await sleep(SIZE.afterMs)
  await load.stop()

  const during = load.startedBetween(killStart, killEnd)
  const afterwards = load.startedBetween(recoveredAt, Number.POSITIVE_INFINITY)
  report('postgres (connections killed)', {
    acknowledged: load.acknowledged(),
    'connections terminated': terminated,
    'while killing': `${during.length} requests (${statusSummary(during)})`,
    'after recovery': statusSummary(afterwards),
  })
  assertAlive()
  assert.ok(terminated > 0, 'connections were terminated')
  assert.deepEqual(
    sample(during.filter((r) => !isOk(r) && !isUnavailable(r)).map(describe)),
    [],
    'a request whose connection was killed answers 503 UNAVAILABLE, never a 500',
  )
  assert.ok(recovered, 'ready again once the connections are left alone')
  assert.deepEqual(sample(afterwards.filter((r) => !isOk(r)).map(describe)), [], 'then 2xx again')
})

test(`PostgreSQL frozen (SIGSTOP) under load: every request answered within ${LATENCY_BOUND_MS / 1000} s`, {
  skip: SKIP,
}, async () => {
  await ensureService()
  const base = service.base
  const load = mixedLoad(base)
  await sleep(SIZE.warmMs)
  // Frozen, PostgreSQL accepts TCP connections and keeps the open ones, but never answers:
  // only the service's own timeouts can end a request. The freeze outlasts the bound.
  const freezeAt = performance.now()
  world.pg.freeze()
  const ready: Promise<Reply>[] = []
  while (performance.now() - freezeAt < FREEZE_MS) {
    if (ready.length < 20) ready.push(call(base, 'GET', '/ready'))
    await sleep(1000)
  }
  world.pg.thaw()
  const thawAt = performance.now()
  const recovered = await until(async () => {
    const r = await call(base, 'GET', '/ready')
    return r.status === 200 || !service.running
  }, RECOVERY_BOUND_MS)
  await sleep(SIZE.afterMs)
  await load.stop()

  const during = load.startedBetween(freezeAt, thawAt)
  const readies = await Promise.all(ready)
  const maxDuring = Math.max(0, ...during.map((r) => r.ms), ...readies.map((r) => r.ms))
  report('postgres (frozen)', {
    acknowledged: load.acknowledged(),
    'while frozen': `${during.length} requests (${statusSummary(during)})`,
    'max latency while frozen': ms(maxDuring),
    freeze: ms(thawAt - freezeAt),
    '/ready while frozen': statusSummary(readies),
  })
  assertAlive()
  const slow = [...during, ...readies].filter((r) => r.ms > LATENCY_BOUND_MS)
  assert.deepEqual(
    sample(slow.map((r) => `${describe(r)} after ${ms(r.ms)}`)),
    [],
    `no request waits past ${LATENCY_BOUND_MS} ms for a database that does not answer`,
  )
  assert.deepEqual(
    sample(during.filter((r) => !isOk(r) && !isUnavailable(r)).map(describe)),
    [],
    'while PostgreSQL is frozen, a request answers 2xx or 503 UNAVAILABLE',
  )
  assert.deepEqual(
    sample(readies.filter((r) => r.status !== 503).map(describe)),
    [],
    '/ready answers 503 while PostgreSQL is frozen',
  )
  assert.ok(recovered, 'ready again once PostgreSQL answers')
})

function assertAlive(): void {
  assert.ok(
    service.running,
    `the service survived the fault; its last output:\n${service.output()}`,
  )
}

/**
 * /me (a read), refresh (a single-statement write), signup (a transaction after an argon2
 * hash) and the public config (tenant cache), on one instance.
 */
function mixedLoad(base: string): Load {
  const { slug } = tenant
  const load = new Load({ width: SIZE.width, maxOps: 100_000, maxMs: 120_000 }, async () => {
    const r = Math.random()
    if (r < 0.15) {
      const body = { email: uniqueEmail(), password: PASSWORD }
      const path = `/v1/${slug}/auth/signup`
      load.record('signup', await call(base, 'POST', path, { ip: randomIp(), body }))
      return
    }
    if (r < 0.25) {
      const path = `/v1/${slug}/auth/config`
      load.record('config', await call(base, 'GET', path, { ip: randomIp() }))
      return
    }
    const certain = sessions.filter((x) => !x.busy && !x.uncertain)
    if (r < 0.6 || certain.length === 0) {
      const token = pick(sessions)!.accessToken
      load.record('me', await call(base, 'GET', `/v1/${slug}/me`, { token, ip: randomIp() }))
      return
    }
    const s = pick(certain)!
    s.busy = true
    const body = { refreshToken: s.refreshToken }
    const path = `/v1/${slug}/auth/refresh`
    const reply = load.record('refresh', await call(base, 'POST', path, { ip: randomIp(), body }))
    // A refresh that failed with the database may or may not have rotated: not used again.
    if (reply.status === 200) s.refreshToken = reply.body.refreshToken
    else s.uncertain = true
    s.busy = false
  })
  return load
}

const isOk = (r: Reply) => r.status >= 200 && r.status < 300

const isUnavailable = (r: Reply) =>
  r.status === 503 &&
  r.body?.code === 'UNAVAILABLE' &&
  typeof r.body?.message === 'string' &&
  r.body?.details?.reason === 'unavailable'

const describe = (r: Reply & { kind?: string }) =>
  `${r.kind ?? ''} ${r.status} ${r.error ?? JSON.stringify(r.body)}`.trim()

/** The distinct failures with their counts, a few, so an assertion message stays readable. */
function sample(lines: string[]): string[] {
  const counts = new Map<string, number>()
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1)
  return [...counts].slice(0, 6).map(([line, n]) => `${n}× ${line}`)
}
