// Rate limits of CONTRACT §6. Buckets live in Redis when REDIS_URL is set (so several
// instances count together) and in memory otherwise. With Redis, an in-memory insurance
// bucket takes over when Redis is unreachable, so every limit still holds.
//
// Every check *consumes before the work*: a burst of parallel attempts cannot all pass a
// read-only check and then all fail. Successful work gives its point back where the rule
// counts failures only.
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

export class RateLimits {
  private readonly limiters = new Map<LimitName, RateLimiterAbstract>()
  /** Told of every refusal (the metrics count them by budget). */
  onRefused: ((name: LimitName) => void) | undefined

  constructor(limits: Limits, redis: Redis | undefined) {
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

  private get(name: LimitName): RateLimiterAbstract {
    const limiter = this.limiters.get(name)
    if (!limiter) throw new Error(`unknown limit ${name}`)
    return limiter
  }
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
    const taken: [LimitName, string][] = [['loginFailuresPerIp', attempt.ip]]
    if (attempt.factor === 'password') taken.push(['loginFailures', `${account}:${attempt.ip}`])
    const reserved: [LimitName, string][] = []
    try {
      for (const [name, key] of taken) {
        await this.limits.hit(name, key)
        reserved.push([name, key])
      }
      try {
        await this.limits.hit('accountFailures', account)
      } catch (error) {
        await this.recordLock(attempt, error)
        throw error
      }
    } catch (error) {
      await Promise.all(reserved.map(([name, key]) => this.limits.refund(name, key)))
      throw error
    }
    const giveBack = () => reserved.map(([name, key]) => this.limits.refund(name, key))
    return {
      release: async () => {
        await Promise.all([...giveBack(), this.limits.refund('accountFailures', account)])
      },
      succeeded: async () => {
        await Promise.all([
          ...giveBack(),
          this.limits.reset('accountFailures', account),
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
