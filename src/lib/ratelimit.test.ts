// The batched budgets of issue 37 (RateLimits.hitEach and settle: one Redis round trip for
// the points a request takes or gives back together) count exactly as the point-by-point
// calls they replace: the same refusals, Retry-After, counts and expiries in Redis, the
// account lock taken at the same point; and with Redis away they still refuse, in memory.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { Redis } from 'ioredis'
import { AppError } from './errors.ts'
import type { Limits } from './limits.ts'
import { BudgetRefused, type LimitName, type Point, RateLimits } from './ratelimit.ts'

const REDIS_URL = process.env.REDIS_URL
const NEEDS_REDIS = REDIS_URL ? false : 'needs REDIS_URL'

// Three budgets of a sign-in, small so a run meets every refusal; the account one locks
// (blockDuration) as the service's does.
const LIMITS = {
  loginFailuresPerIp: { points: 5, seconds: 60 },
  loginFailures: { points: 3, seconds: 900 },
  accountFailures: { points: 4, seconds: 3600 },
} as unknown as Limits

let redis: Redis
before(async () => {
  if (!REDIS_URL) return
  redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  await new Promise((resolve) => redis.once('ready', resolve))
})
after(() => redis?.disconnect())

type Outcome = 'ok' | { budget: LimitName; retryAfter: number }

/** The sign-in's points, taken one `hit` after another as before the batch (the reference). */
async function takeOneByOne(limits: RateLimits, points: Point[]): Promise<Outcome> {
  const taken: Point[] = []
  for (const [name, key] of points) {
    try {
      await limits.hit(name, key)
    } catch (error) {
      await Promise.all(taken.map(([n, k]) => limits.refund(n, k)))
      return { budget: name, retryAfter: (error as AppError).retryAfter ?? -1 }
    }
    taken.push([name, key])
  }
  return 'ok'
}

async function takeBatched(limits: RateLimits, points: Point[]): Promise<Outcome> {
  try {
    await limits.hitEach(points)
    return 'ok'
  } catch (error) {
    assert.ok(error instanceof BudgetRefused, String(error))
    assert.ok(error.refusal instanceof AppError)
    assert.equal(error.refusal.reason, 'rate_limited')
    return { budget: error.budget, retryAfter: error.refusal.retryAfter ?? -1 }
  }
}

/** What Redis holds for a key: its count and whether it expires within `seconds`. */
async function stored(name: LimitName, key: string) {
  const full = `rl:${name}:${key}`
  const [value, ttl] = await Promise.all([redis.get(full), redis.pttl(full)])
  return { value, ttlSeconds: ttl < 0 ? ttl : Math.round(ttl / 1000) }
}

test("a sign-in's points taken and given back in one round trip count as one by one did", {
  skip: NEEDS_REDIS,
}, async () => {
  const reference = new RateLimits(LIMITS, redis)
  const batched = new RateLimits(LIMITS, redis)
  const run = randomBytes(6).toString('hex')
  // Two addresses and two accounts, so each budget is met on its own: the per-address one
  // (5) by the sixth try of one address, the per-(account, address) one (3) by the fourth,
  // the account's (4, then held for an hour) across addresses.
  const points = (side: string, ip: string, account: string): Point[] => [
    ['loginFailuresPerIp', `${side}:${run}:${ip}`],
    ['loginFailures', `${side}:${run}:${account}:${ip}`],
    ['accountFailures', `${side}:${run}:${account}`],
  ]
  const script: [ip: string, account: string, then: 'fail' | 'succeed' | 'release'][] = [
    ['a', 'x', 'fail'],
    ['a', 'x', 'release'],
    ['a', 'x', 'fail'],
    ['a', 'x', 'fail'],
    ['a', 'x', 'fail'],
    ['b', 'x', 'fail'],
    ['b', 'x', 'fail'],
    ['b', 'x', 'fail'],
    ['a', 'y', 'succeed'],
    ['a', 'y', 'fail'],
    ['a', 'y', 'fail'],
    ['a', 'y', 'fail'],
    ['b', 'y', 'succeed'],
    ['b', 'y', 'fail'],
  ]
  const outcomes: Outcome[] = []
  for (const [ip, account, then] of script) {
    const one = points('ref', ip, account)
    const two = points('new', ip, account)
    const [expected, got] = [await takeOneByOne(reference, one), await takeBatched(batched, two)]
    assert.deepEqual(got, expected, `${ip} ${account}: ${JSON.stringify(expected)}`)
    outcomes.push(got)
    if (got !== 'ok' || then === 'fail') continue
    if (then === 'release') {
      await Promise.all(one.map(([n, k]) => reference.refund(n, k)))
      await batched.settle(two)
    } else {
      await Promise.all([
        reference.refund(one[0][0], one[0][1]),
        reference.refund(one[1][0], one[1][1]),
        reference.reset(one[2][0], one[2][1]),
      ])
      await batched.settle(two.slice(0, 2), [two[2]])
    }
  }
  // The run met each budget's refusal, the account's lock among them.
  const refusedBy = new Set(outcomes.flatMap((o) => (o === 'ok' ? [] : [o.budget])))
  assert.deepEqual([...refusedBy].sort(), [
    'accountFailures',
    'loginFailures',
    'loginFailuresPerIp',
  ])
  const locked = outcomes.find((o) => o !== 'ok' && o.budget === 'accountFailures')
  assert.ok(locked !== 'ok' && locked !== undefined && locked.retryAfter > 3000, 'held for an hour')
  // And Redis holds the same counts with the same lifetimes under both sides' keys.
  for (const ip of ['a', 'b']) {
    for (const account of ['x', 'y']) {
      const one = points('ref', ip, account)
      const two = points('new', ip, account)
      for (let i = 0; i < one.length; i++) {
        assert.deepEqual(
          await stored(two[i][0], two[i][1]),
          await stored(one[i][0], one[i][1]),
          `${two[i][0]} of ${ip} ${account}`,
        )
      }
    }
  }
})

test('with Redis unreachable, batched points are counted in memory and still refused', async () => {
  // A port nothing listens on; commands fail at once (no offline queue), as the service's.
  const away = new Redis('redis://127.0.0.1:1', {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
  })
  away.on('error', () => {})
  const limits = new RateLimits(LIMITS, away)
  const ip = `mem-${randomBytes(4).toString('hex')}`
  const point: Point[] = [
    ['loginFailuresPerIp', ip],
    ['loginFailures', `t:e:${ip}`],
  ]
  const outcomes: Outcome[] = []
  for (let i = 0; i < 4; i++) outcomes.push(await takeBatched(limits, point))
  assert.deepEqual(outcomes.slice(0, 3), ['ok', 'ok', 'ok'])
  assert.equal((outcomes[3] as { budget: LimitName }).budget, 'loginFailures')
  // The refusal gave back the address's point: two more tries of another account pass
  // (5 per address: 3 kept, 1 given back by the refusal), the next is refused.
  const other: Point[] = [
    ['loginFailuresPerIp', ip],
    ['loginFailures', `t:f:${ip}`],
  ]
  assert.equal(await takeBatched(limits, other), 'ok')
  assert.equal(await takeBatched(limits, other), 'ok')
  assert.equal(
    ((await takeBatched(limits, other)) as { budget: LimitName }).budget,
    'loginFailuresPerIp',
  )
  // Given back in memory too: the refused try kept its point (6 of 5), two given back
  // leave room for one more.
  await limits.settle([other[0]])
  await limits.settle([other[0]])
  assert.equal(await takeBatched(limits, other), 'ok')
  assert.equal(
    ((await takeBatched(limits, other)) as { budget: LimitName }).budget,
    'loginFailuresPerIp',
  )
  away.disconnect()
})

test('without Redis, batched points are the in-memory buckets, refused at the same point', async () => {
  const limits = new RateLimits(LIMITS, undefined)
  const account: Point = ['accountFailures', `t:${randomBytes(4).toString('hex')}`]
  const outcomes: Outcome[] = []
  for (let i = 0; i < 6; i++) {
    outcomes.push(await takeBatched(limits, [['loginFailuresPerIp', `ip${i}`], account]))
  }
  assert.deepEqual(outcomes.slice(0, 4), ['ok', 'ok', 'ok', 'ok'])
  const held = outcomes[4] as { budget: LimitName; retryAfter: number }
  assert.equal(held.budget, 'accountFailures')
  assert.ok(held.retryAfter > 3000, 'the account is held for its block seconds')
  // A reset (a success elsewhere, an unlock) ends the hold.
  await limits.settle([], [account])
  assert.equal(await takeBatched(limits, [['loginFailuresPerIp', 'ip9'], account]), 'ok')
})
