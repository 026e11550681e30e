// Faults, scenario 2 (CONTRACT §6 and §4): Redis dies under load and comes back. Two
// instances share the database and Redis. While Redis is gone, the service keeps answering
// ordinary requests (never a 5xx), every rate limit still holds (a small signup budget and
// the password-failure budget still end in 429), a logout on one instance still reaches the
// other within 5 seconds, and /ready says Redis is failing. Once Redis is back, both
// instances are ready again by themselves and the limits count in Redis again.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Redis } from 'ioredis'
import {
  call,
  callSure,
  createTenant,
  expectStatus,
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
  uniqueEmail,
} from './client.ts'
import { Load, pick, sleep, statusSummary, until } from './load.ts'
import { FaultWorld } from './procs.ts'

const SIZE = LONG
  ? { users: 24, width: 16, warmMs: 2000, outageMs: 10_000, afterMs: 3000 }
  : { users: 8, width: 8, warmMs: 1000, outageMs: 3000, afterMs: 1000 }
// Small budgets, so that the probes meet them; the load spreads over many addresses.
const SIGNUP_BUDGET = 3
const LOGIN_FAILURE_BUDGET = 3
const REVOCATION_MS = 5000

let world: FaultWorld
before(async () => {
  if (SKIP) return
  world = await FaultWorld.create()
})
after(() => world?.teardown())

test('Redis down under load: answers go on, limits hold, revocation crosses instances', {
  skip: SKIP,
}, async () => {
  const env = {
    RATE_LIMIT_SIGNUP: `${SIGNUP_BUDGET}/3600`,
    RATE_LIMIT_LOGIN_FAILURES: `${LOGIN_FAILURE_BUDGET}/900`,
  }
  const [a, b] = await Promise.all([world.startService({ env }), world.startService({ env })])
  const bases = [a.service.base, b.service.base]
  const tenant = await createTenant(bases[0])
  const { slug } = tenant
  const range = (n: number) => Array.from({ length: n }, (_, i) => i)
  const sessions = (await inBatches(range(SIZE.users), 8, () => signup(bases[0], slug))).map(
    (s) => ({ ...s, busy: false }),
  )
  const victim = await signup(bases[0], slug)

  // The load: /me, refresh, signup and the public config, on either instance.
  const load = new Load({ width: SIZE.width, maxOps: 100_000, maxMs: 120_000 }, async () => {
    const base = pick(bases)!
    const r = Math.random()
    if (r < 0.2) {
      load.record(
        'signup',
        await call(base, 'POST', `/v1/${slug}/auth/signup`, {
          ip: randomIp(),
          body: { email: uniqueEmail(), password: PASSWORD },
        }),
      )
      return
    }
    if (r < 0.3) {
      load.record('config', await call(base, 'GET', `/v1/${slug}/auth/config`, { ip: randomIp() }))
      return
    }
    const s = pick(sessions.filter((x) => !x.busy))
    if (!s) return
    s.busy = true
    if (r < 0.65) {
      load.record(
        'me',
        await call(base, 'GET', `/v1/${slug}/me`, { token: s.accessToken, ip: randomIp() }),
      )
    } else {
      const reply = load.record(
        'refresh',
        await call(base, 'POST', `/v1/${slug}/auth/refresh`, {
          ip: randomIp(),
          body: { refreshToken: s.refreshToken },
        }),
      )
      if (reply.status === 200) {
        s.accessToken = reply.body.accessToken
        s.refreshToken = reply.body.refreshToken
      }
    }
    s.busy = false
  })

  await sleep(SIZE.warmMs)
  const downAt = performance.now()
  await world.redis.stop()

  // While Redis is gone: the limits, revocation across instances, readiness.
  const signupProbe = await budgetProbe(bases[0], slug)
  const loginProbe = await loginFailureProbe(bases[0], slug, victim)
  const revokedWhileDown = await revocationDelay(bases, slug)
  const readyDown = await call(bases[0], 'GET', '/ready')
  const leftMs = SIZE.outageMs - (performance.now() - downAt)
  if (leftMs > 0) await sleep(leftMs)

  const upAt = performance.now()
  await world.redis.start()
  const recovered = await until(
    async () => {
      const replies = await Promise.all(bases.map((base) => call(base, 'GET', '/ready')))
      return replies.every((r) => r.status === 200 && r.body.checks?.redis === 'ok')
    },
    15_000,
    100,
  )
  const recoverMs = performance.now() - upAt
  await sleep(SIZE.afterMs)
  await load.stop()

  // Back with Redis: the budget counts in Redis again, and revocation still crosses over.
  const ip = randomIp()
  const afterProbe = await budgetProbe(bases[0], slug, ip)
  const redis = new Redis(world.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()
  const keyInRedis = await redis.exists(`rl:signup:${ip}`)
  redis.disconnect()
  const revokedAfter = await revocationDelay(bases, slug)

  const outage = load.startedBetween(downAt, upAt)
  const failed = load.replies.filter((r) => r.status === 0 || r.status >= 500)
  assert.deepEqual(failed.map(describe), [], 'no 5xx and no dropped connection, Redis or not')
  assert.deepEqual(
    load.replies.filter((r) => r.status >= 300).map(describe),
    [],
    'every ordinary request is answered as without the fault',
  )
  assert.ok(outage.length > 0, 'the load ran while Redis was down')
  assert.deepEqual(
    signupProbe.statuses,
    [200, 200, 200, 429, 429],
    'signup budget while Redis is down',
  )
  assert.ok(signupProbe.retryAfter, '429 carries Retry-After')
  assert.deepEqual(loginProbe, [401, 401, 401, 429], 'password-failure budget while Redis is down')
  assert.ok(
    revokedWhileDown <= REVOCATION_MS,
    `logout reached the other instance in ${revokedWhileDown} ms`,
  )
  assert.equal(readyDown.status, 503, '/ready answers 503 while Redis is down')
  assert.equal(readyDown.body?.checks?.redis, 'failing')
  assert.ok(recovered, `both instances ready again within 15 s of Redis coming back`)
  assert.deepEqual(afterProbe.statuses, [200, 200, 200, 429, 429], 'signup budget with Redis back')
  assert.equal(keyInRedis, 1, 'the budget counts in Redis again')
  assert.ok(
    revokedAfter <= REVOCATION_MS,
    `logout reached the other instance in ${revokedAfter} ms`,
  )

  report('redis', {
    acknowledged: load.acknowledged(),
    'during the outage': `${outage.length} requests, max latency ${ms(Math.max(...outage.map((r) => r.ms)))}`,
    outage: ms(upAt - downAt),
    'recovered after Redis came back in': ms(recoverMs),
    'revocation reached the other instance in': `${ms(revokedWhileDown)} (Redis down), ${ms(revokedAfter)} (back)`,
    'limits held': '2 of 2',
    statuses: statusSummary(load.replies),
  })
})

const describe = (r: Reply & { kind?: string }) =>
  `${r.kind} ${r.status} ${r.error ?? JSON.stringify(r.body)}`

/** Signups from one address, one after another, past the budget. */
async function budgetProbe(base: string, slug: string, ip = randomIp()) {
  const statuses: number[] = []
  let retryAfter: string | null | undefined
  for (let i = 0; i < SIGNUP_BUDGET + 2; i++) {
    const reply = await call(base, 'POST', `/v1/${slug}/auth/signup`, {
      ip,
      body: { email: uniqueEmail(), password: PASSWORD },
    })
    statuses.push(reply.status)
    if (reply.status === 429) retryAfter ??= reply.headers?.get('retry-after')
  }
  return { statuses, retryAfter }
}

/** Wrong passwords from one address up to the budget, then the right one: still 429. */
async function loginFailureProbe(base: string, slug: string, victim: Session) {
  const ip = randomIp()
  const statuses: number[] = []
  for (let i = 0; i < LOGIN_FAILURE_BUDGET; i++) {
    const reply = await call(base, 'POST', `/v1/${slug}/auth/login`, {
      ip,
      body: { email: victim.email, password: 'not-the-password-at-all' },
    })
    statuses.push(reply.status)
  }
  const right = await call(base, 'POST', `/v1/${slug}/auth/login`, {
    ip,
    body: { email: victim.email, password: PASSWORD },
  })
  statuses.push(right.status)
  return statuses
}

/**
 * Signs a user up and logs it out on the first instance; answers how long the second took
 * to refuse its access token with 401 session_revoked (CONTRACT §4: within 5 seconds).
 */
async function revocationDelay(bases: string[], slug: string): Promise<number> {
  const user = await signup(bases[0], slug)
  expectStatus(
    await callSure(bases[1], 'GET', `/v1/${slug}/me`, { token: user.accessToken }),
    200,
    'me on B',
  )
  const logout = await call(bases[0], 'POST', `/v1/${slug}/auth/logout`, {
    body: { refreshToken: user.refreshToken },
  })
  expectStatus(logout, 200, 'logout on A')
  const at = performance.now()
  let last: Reply | undefined
  await until(
    async () => {
      last = await call(bases[1], 'GET', `/v1/${slug}/me`, { token: user.accessToken })
      return last.status === 401
    },
    REVOCATION_MS + 2000,
    50,
  )
  const delay = performance.now() - at
  assert.equal(last?.status, 401, 'the second instance refuses the logged-out access token')
  assert.equal(last?.body?.details?.reason, 'session_revoked')
  return delay
}
