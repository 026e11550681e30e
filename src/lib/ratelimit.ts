// Rate limits of CONTRACT §6. Buckets live in Redis when REDIS_URL is set (so several
// instances count together) and in memory otherwise. With Redis, an in-memory insurance
// bucket takes over when Redis is unreachable, so every limit still holds.
//
// Every check *consumes before the work*: a burst of parallel attempts cannot all pass a
// read-only check and then all fail. Successful work gives its point back where the rule
// counts failures only.
//
// Several budgets a request takes together (a sign-in's three failure budgets, and what it
// gives back once it succeeded) go to Redis as one script, one round trip (issue 37), with
// the same keys, counts, expiries and lock as rate-limiter-flexible's own commands; when
// the script fails (Redis away), the in-memory insurance buckets count them, as for a
// single point. Without Redis they are taken one by one in memory, as always.
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'
import type * as Flexible from 'rate-limiter-flexible'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import { AppError } from './errors.ts'
import type { Budget, Limits } from './limits.ts'

// The three classes used, each from its own file: the package's index loads every store it
// supports, and with them node:cluster, child_process and dgram (0.8 MB for nothing).
const require = createRequire(import.meta.url)
const RateLimiterMemory: typeof Flexible.RateLimiterMemory = require('rate-limiter-flexible/lib/RateLimiterMemory.js')
const RateLimiterRedis: typeof Flexible.RateLimiterRedis = require('rate-limiter-flexible/lib/RateLimiterRedis.js')
const RateLimiterRes: typeof Flexible.RateLimiterRes = require('rate-limiter-flexible/lib/RateLimiterRes.js')

export type LimitName = keyof Limits

/** How long a run of account failures is remembered without a success (seconds). */
export const ACCOUNT_FAILURE_MEMORY = 24 * 60 * 60

/** One point of one budget: the budget and the key it counts under. */
export type Point = readonly [name: LimitName, key: string]

/** A budget's refusal among several taken at once: which one, and its 429. */
export class BudgetRefused extends Error {
  readonly budget: LimitName
  readonly refusal: AppError
  constructor(budget: LimitName, refusal: AppError) {
    super(`rate limit ${budget} refused`)
    this.budget = budget
    this.refusal = refusal
  }
}

// Takes one point of each key in turn, as rate-limiter-flexible's consume does (its
// incr-and-expire script; a budget with a lock is held for its block seconds when this point
// is the first past it); at the first refusal, gives back the points taken before it in this
// call (its own stays, as a refused consume's does) and answers its position and the
// milliseconds until it frees. ARGV: per key, its duration, points and block seconds.
const TAKE_SCRIPT = `
for i = 1, #KEYS do
  local duration = tonumber(ARGV[3 * i - 2])
  local points = tonumber(ARGV[3 * i - 1])
  local block = tonumber(ARGV[3 * i])
  redis.call('set', KEYS[i], 0, 'EX', duration, 'NX')
  local consumed = redis.call('incrby', KEYS[i], 1)
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], duration)
    ttl = 1000 * duration
  end
  if consumed > points then
    if block > 0 and consumed == points + 1 then
      redis.call('set', KEYS[i], consumed, 'EX', block)
      ttl = 1000 * block
    end
    for j = 1, i - 1 do
      local back = ARGV[3 * j - 2]
      redis.call('set', KEYS[j], 0, 'EX', back, 'NX')
      redis.call('incrby', KEYS[j], -1)
      if redis.call('pttl', KEYS[j]) == -1 then redis.call('expire', KEYS[j], back) end
    end
    return {i, ttl}
  end
end
return {0, 0}
`

// Gives back one point of each of the first ARGV[1] keys (rate-limiter-flexible's reward:
// the same script with -1; ARGV[i + 1] is key i's duration) and forgets the other keys
// (its delete).
const SETTLE_SCRIPT = `
local given = tonumber(ARGV[1])
for i = 1, given do
  local duration = ARGV[i + 1]
  redis.call('set', KEYS[i], 0, 'EX', duration, 'NX')
  redis.call('incrby', KEYS[i], -1)
  if redis.call('pttl', KEYS[i]) == -1 then redis.call('expire', KEYS[i], duration) end
end
for i = given + 1, #KEYS do redis.call('del', KEYS[i]) end
return 0
`

/** The scripts as ioredis defines them: the number of keys, the keys, then the arguments. */
interface Scripted {
  rlTake(keyCount: number, ...keysThenArgs: string[]): Promise<[number, number]>
  rlSettle(keyCount: number, ...keysThenArgs: string[]): Promise<number>
}

interface BudgetShape {
  prefix: string
  /** Seconds a count lives (rate-limiter-flexible's duration). */
  duration: number
  points: number
  /** Seconds a spent budget is held (0: none). */
  block: number
}

export class RateLimits {
  private readonly limiters = new Map<LimitName, RateLimiterAbstract>()
  /** The in-memory buckets: the only ones without Redis, the insurance with it. */
  private readonly memory = new Map<LimitName, RateLimiterAbstract>()
  private readonly shapes = new Map<LimitName, BudgetShape>()
  private readonly redis: (Redis & Scripted) | undefined
  /** Told of every refusal (the metrics count them by budget). */
  onRefused: ((name: LimitName) => void) | undefined

  constructor(limits: Limits, redis: Redis | undefined) {
    if (redis) {
      redis.defineCommand('rlTake', { lua: TAKE_SCRIPT })
      redis.defineCommand('rlSettle', { lua: SETTLE_SCRIPT })
      this.redis = redis as Redis & Scripted
    }
    for (const [name, budget] of Object.entries(limits) as [LimitName, Budget][]) {
      // The account budget counts *consecutive* failures (CONTRACT §6): only a success
      // resets it, not the passing of an hour, so it is kept for a day; once spent, the
      // account is held for `seconds` (an hour), after which the count starts afresh.
      const account = name === 'accountFailures'
      const options = {
        keyPrefix: `rl:${name}`,
        points: budget.points,
        duration: account ? ACCOUNT_FAILURE_MEMORY : budget.seconds,
        blockDuration: account ? budget.seconds : 0,
      }
      const memory = new RateLimiterMemory(options)
      this.memory.set(name, memory)
      this.shapes.set(name, {
        prefix: options.keyPrefix,
        duration: options.duration,
        points: options.points,
        block: options.blockDuration,
      })
      this.limiters.set(
        name,
        redis
          ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: memory })
          : memory,
      )
    }
  }

  /** Takes one point; throws 429 with Retry-After when the budget is spent. */
  async hit(name: LimitName, key: string): Promise<void> {
    const limiter = this.get(name)
    try {
      await limiter.consume(key)
    } catch (error) {
      this.onRefused?.(name)
      throw tooMany(error)
    }
  }

  /** Gives back a point taken by `hit`, for work that turned out not to count. */
  async refund(name: LimitName, key: string): Promise<void> {
    await this.get(name)
      .reward(key, 1)
      .catch(() => {})
  }

  /** Forgets every point of a key (a success ends a run of consecutive failures). */
  async reset(name: LimitName, key: string): Promise<void> {
    await this.get(name)
      .delete(key)
      .catch(() => {})
  }

  /**
   * Takes one point of each budget in order, as `hit` one after the other would: at the
   * first refusal the points taken before it are given back and it throws BudgetRefused
   * naming it (its point stays spent, as a refused `hit`'s does). With Redis, one round trip.
   */
  async hitEach(points: readonly Point[]): Promise<void> {
    const refused = this.redis
      ? await this.takeInRedis(this.redis, points).catch(() => this.takeOneByOne(points, true))
      : await this.takeOneByOne(points, false)
    if (!refused) return
    this.onRefused?.(refused.budget)
    throw refused
  }

  /**
   * Gives back a point of each of `refunds` and forgets every point of `resets`, as
   * `refund` and `reset` each would; with Redis, one round trip.
   */
  async settle(refunds: readonly Point[], resets: readonly Point[] = []): Promise<void> {
    const redis = this.redis
    if (redis) {
      const keys = [...refunds, ...resets].map(([name, key]) => this.redisKey(name, key))
      const args = [
        String(refunds.length),
        ...refunds.map(([name]) => String(this.shape(name).duration)),
      ]
      const settled = await redis.rlSettle(keys.length, ...keys, ...args).then(
        () => true,
        () => false,
      )
      if (settled) return
    }
    const memory = (name: LimitName) => (redis ? this.inMemory(name) : this.get(name))
    await Promise.all([
      ...refunds.map(([name, key]) =>
        memory(name)
          .reward(key, 1)
          .catch(() => {}),
      ),
      ...resets.map(([name, key]) =>
        memory(name)
          .delete(key)
          .catch(() => {}),
      ),
    ])
  }

  private async takeInRedis(
    redis: Scripted,
    points: readonly Point[],
  ): Promise<BudgetRefused | undefined> {
    const keys = points.map(([name, key]) => this.redisKey(name, key))
    const args = points.flatMap(([name]) => {
      const { duration, points: allowed, block } = this.shape(name)
      return [String(duration), String(allowed), String(block)]
    })
    const [position, ms] = await redis.rlTake(keys.length, ...keys, ...args)
    if (position === 0) return undefined
    return refusal(points[position - 1][0], Number(ms))
  }

  /** `hit` after `hit`, in memory (the insurance buckets when `insured`, Redis having failed). */
  private async takeOneByOne(
    points: readonly Point[],
    insured: boolean,
  ): Promise<BudgetRefused | undefined> {
    const taken: Point[] = []
    for (const point of points) {
      const [name, key] = point
      try {
        await (insured ? this.inMemory(name) : this.get(name)).consume(key)
      } catch (error) {
        await Promise.all(
          taken.map(([back, backKey]) =>
            (insured ? this.inMemory(back) : this.get(back)).reward(backKey, 1).catch(() => {}),
          ),
        )
        return new BudgetRefused(name, tooMany(error))
      }
      taken.push(point)
    }
    return undefined
  }

  private redisKey(name: LimitName, key: string): string {
    return `${this.shape(name).prefix}:${key}`
  }

  private shape(name: LimitName): BudgetShape {
    const shape = this.shapes.get(name)
    if (!shape) throw new Error(`unknown limit ${name}`)
    return shape
  }

  private inMemory(name: LimitName): RateLimiterAbstract {
    const limiter = this.memory.get(name)
    if (!limiter) throw new Error(`unknown limit ${name}`)
    return limiter
  }

  private get(name: LimitName): RateLimiterAbstract {
    const limiter = this.limiters.get(name)
    if (!limiter) throw new Error(`unknown limit ${name}`)
    return limiter
  }
}

function refusal(name: LimitName, ms: number): BudgetRefused {
  const retryAfter = Math.max(1, Math.ceil(ms / 1000))
  return new BudgetRefused(name, new AppError('rate_limited', { retryAfter }))
}

function tooMany(error: unknown): AppError {
  const ms = error instanceof RateLimiterRes ? error.msBeforeNext : 60_000
  return new AppError('rate_limited', { retryAfter: Math.max(1, Math.ceil(ms / 1000)) })
}

/**
 * The failure budgets of one first-factor sign-in attempt: per client address across every
 * email and tenant (CONTRACT §8), per (tenant, email, IP) for passwords, and per account
 * across every IP and factor (§6). `begin` reserves a try in each; the caller then reports
 * `succeeded` (points returned, the account's run of failures ends) or leaves the
 * reservation in place as the failure it was.
 */
export class SignInGuard {
  private readonly limits: RateLimits
  private readonly lock: AccountLockStore | undefined
  constructor(limits: RateLimits, lock?: AccountLockStore) {
    this.limits = limits
    this.lock = lock
  }

  /**
   * Ends an account's lock (CONTRACT §21 unlock): its run of failures is forgotten, so the
   * next try is the first of a fresh budget. The caller clears the stored lockedUntil.
   */
  async unlock(account: { tenantId: string; email: string }): Promise<void> {
    await this.limits.reset('accountFailures', `${account.tenantId}:${account.email}`)
  }

  async begin(attempt: {
    tenantId: string
    email: string
    /** The client address. */
    ip: string
    /** Passwords also count per (tenant, email, IP); emailed codes do not. */
    factor: 'password' | 'code'
  }): Promise<SignInTry> {
    const account = `${attempt.tenantId}:${attempt.email}`
    const reserved: Point[] = [['loginFailuresPerIp', attempt.ip]]
    if (attempt.factor === 'password') {
      reserved.push(['loginFailures', `${account}:${attempt.ip}`])
    }
    const accountPoint: Point = ['accountFailures', account]
    // In this order, one round trip with Redis: a refusal gives back the points before it.
    try {
      await this.limits.hitEach([...reserved, accountPoint])
    } catch (error) {
      if (!(error instanceof BudgetRefused)) throw error
      if (error.budget === 'accountFailures') await this.recordLock(attempt, error.refusal)
      throw error.refusal
    }
    return {
      release: async () => {
        await this.limits.settle([...reserved, accountPoint])
      },
      succeeded: async () => {
        await Promise.all([
          this.limits.settle(reserved, [accountPoint]),
          this.lock?.cleared(attempt.tenantId, attempt.email).catch(() => {}),
        ])
      },
    }
  }

  /** The account budget refused: the lock's end is written where the user record shows it. */
  private async recordLock(attempt: { tenantId: string; email: string }, error: unknown) {
    if (!this.lock) return
    const seconds = error instanceof AppError ? (error.retryAfter ?? 0) : 0
    if (seconds <= 0) return
    await this.lock
      .locked(attempt.tenantId, attempt.email, new Date(Date.now() + seconds * 1000))
      .catch(() => {})
  }
}

/**
 * Where an account's failure lock is shown (users.locked_until, CONTRACT §21); the guard
 * writes it, failures to write never change a sign-in's answer.
 */
export interface AccountLockStore {
  /** The account budget refused a try: the lock holds until `until`. */
  locked(tenantId: string, email: string, until: Date): Promise<void>
  /** A sign-in succeeded: no lock remains. */
  cleared(tenantId: string, email: string): Promise<void>
}

export interface SignInTry {
  /** The attempt was not a failure (a second factor is asked for): give its points back. */
  release(): Promise<void>
  /** The attempt succeeded: points back, and the account's run of failures ends. */
  succeeded(): Promise<void>
}
