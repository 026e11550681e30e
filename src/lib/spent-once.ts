// Single use of a value until it expires: an ALTCHA answer by its nonce (CONTRACT §21: a
// replay is `captcha_invalid`; modules/captcha/altcha.ts) and a SAML AuthnRequest by its ID
// (CONTRACT §22; modules/samlidp/service.ts), each a store of its own with its own Redis
// key prefix. In Redis when REDIS_URL is set (one `SET … NX PX`: exactly one of two
// concurrent requests with one value spends it, on any instance), else in this process, as
// the rate limits are kept (lib/ratelimit.ts). While Redis cannot be reached the process's
// own record takes over, as the rate limits' insurance bucket does.
import type { Redis } from 'ioredis'

/** At most this many values are remembered in process; the oldest expire first. */
const MEMORY_LIMIT = 100_000

export class SpentOnce {
  private readonly memory = new Map<string, number>()
  private readonly redis: Redis | undefined
  private readonly prefix: string
  /** `prefix` names the store's Redis keys (`{prefix}:{key}`). */
  constructor(redis: Redis | undefined, prefix: string) {
    this.redis = redis
    this.prefix = prefix
  }

  /** Spends `key` until `expiresAtMs`; false when it was spent before (a replay). */
  async spend(key: string, nowMs: number, expiresAtMs: number): Promise<boolean> {
    const ttl = Math.max(1, Math.ceil(expiresAtMs - nowMs))
    if (this.redis) {
      try {
        const set = await this.redis.set(`${this.prefix}:${key}`, '1', 'PX', ttl, 'NX')
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

  /** Drops the expired values, then, if still full, the oldest ones. */
  private prune(nowMs: number): void {
    for (const [key, until] of this.memory) if (until <= nowMs) this.memory.delete(key)
    for (const key of this.memory.keys()) {
      if (this.memory.size < MEMORY_LIMIT) break
      this.memory.delete(key)
    }
  }
}
