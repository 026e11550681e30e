// Single use of an ALTCHA answer (CONTRACT §21: a replay is `captcha_invalid`). A solved
// challenge is spent by its nonce until the challenge expires, in Redis when REDIS_URL is
// set (one `SET … NX PX`: exactly one of two concurrent requests with one answer spends
// it, on any instance), else in this process, as the rate limits are kept
// (lib/ratelimit.ts). While Redis cannot be reached the process's own record takes over,
// as the rate limits' insurance bucket does.
import type { Redis } from 'ioredis'

/** At most this many answers are remembered in process; the oldest expire first. */
const MEMORY_LIMIT = 100_000

export class SpentAnswers {
  private readonly memory = new Map<string, number>()
  private readonly redis: Redis | undefined
  constructor(redis: Redis | undefined) {
    this.redis = redis
  }

  /** Spends `key` until `expiresAtMs`; false when it was spent before (a replay). */
  async spend(key: string, nowMs: number, expiresAtMs: number): Promise<boolean> {
    const ttl = Math.max(1, Math.ceil(expiresAtMs - nowMs))
    if (this.redis) {
      try {
        const set = await this.redis.set(`captcha:spent:${key}`, '1', 'PX', ttl, 'NX')
        return set === 'OK'
      } catch {
        // Redis is away: this process's record holds the rule meanwhile.
      }
    }
    return this.spendInMemory(key, nowMs, expiresAtMs)
  }

  private spendInMemory(key: string, nowMs: number, expiresAtMs: number): boolean {
    const until = this.memory.get(key)
    if (until !== undefined && until > nowMs) return false
    this.memory.delete(key)
    if (this.memory.size >= MEMORY_LIMIT) this.prune(nowMs)
    this.memory.set(key, expiresAtMs)
    return true
  }

  /** Drops the expired answers, then, if still full, the oldest ones. */
  private prune(nowMs: number): void {
    for (const [key, until] of this.memory) if (until <= nowMs) this.memory.delete(key)
    for (const key of this.memory.keys()) {
      if (this.memory.size < MEMORY_LIMIT) break
      this.memory.delete(key)
    }
  }
}
