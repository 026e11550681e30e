// API keys verified once and then kept in process (issue 24: the key's read was a second
// database round trip on every API-key request), without giving up CONTRACT §4's rule that
// a revoked key is refused from the very next request on, on every instance.
//
// Every instance reads each tenant's key epoch from Redis on every API-key request (in the
// same moment as the request's rate-limit point, auth.ts), and a kept key counts only
// while the epoch is the one it was read under. A revocation bumps the epoch after its
// transaction committed and before it answers, so a request that follows the answer, on
// any instance, sees a new epoch and reads the key from the database again. An entry is
// stored under the epoch read *before* its database read, so a read racing a revocation
// is stored under the old epoch and dropped at its next use.
//
// Without Redis there is no shared epoch that costs less than the key's own read, so keys
// are not kept (every request reads the key, as before). When Redis does not answer, the
// key is read from the database. Should the epoch's bump fail (Redis away from the revoking
// instance only), an entry is still read again from the database once it is MAX_AGE_MS old.
import { randomInt } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Permission } from '../roles/permissions.ts'

/** Kept keys at most (one entry is about 300 bytes); the oldest go first. */
const MAX_ENTRIES = 10_000
/** A kept key is read again after this long whatever the epoch says (see above). */
const MAX_AGE_MS = 5000

export interface KnownKey {
  id: string
  expiresAt: Date | null
  /** What the key may do (CONTRACT §17): kept with it, so no request reads it apart. */
  permissions: readonly Permission[]
}

interface Entry extends KnownKey {
  tenantId: string
  epoch: string
  at: number
}

export class ApiKeyCache {
  private readonly redis: Redis | undefined
  /** By tenant and the key's SHA-256, in the order stored (so the oldest is first). */
  private readonly entries = new Map<string, Entry>()

  constructor(redis: Redis | undefined) {
    this.redis = redis
  }

  /** Whether keys are kept at all: only with Redis, where every instance reads the epoch. */
  get enabled(): boolean {
    return this.redis !== undefined
  }

  /** The kept key, young enough, whose epoch the caller still has to compare. */
  peek(tenantId: string, keyHash: string, now = Date.now()): Entry | undefined {
    const entry = this.entries.get(`${tenantId}/${keyHash}`)
    return entry && now - entry.at < MAX_AGE_MS ? entry : undefined
  }

  /**
   * The tenant's key epoch, or undefined when Redis does not answer (then nothing is kept).
   * A missing epoch (never set, or lost with a flushed or restarted Redis) starts at a random
   * value, never at a fixed one: after a loss, an entry kept under the old value must not
   * match again, which a fixed start would let happen to one kept before a revocation.
   */
  async epoch(tenantId: string): Promise<string | undefined> {
    if (!this.redis) return undefined
    try {
      const key = epochKey(tenantId)
      const value = await this.redis.get(key)
      if (value !== null) return value
      await this.redis.set(key, String(randomInt(2 ** 47)), 'NX')
      return (await this.redis.get(key)) ?? undefined
    } catch {
      return undefined
    }
  }

  /** Keeps a live key read from the database under `epoch`, read before that read. */
  store(tenantId: string, keyHash: string, key: KnownKey, epoch: string, now = Date.now()) {
    const id = `${tenantId}/${keyHash}`
    this.entries.delete(id)
    this.entries.set(id, {
      id: key.id,
      expiresAt: key.expiresAt,
      permissions: key.permissions,
      tenantId,
      epoch,
      at: now,
    })
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && now - entry.at < MAX_AGE_MS) break
      this.entries.delete(oldest)
    }
  }

  /**
   * After a revocation of the tenant's key `keyId` committed: forgets it here and moves the
   * tenant's epoch on, so every instance reads its keys again at their next use. Awaited
   * before the revocation answers.
   */
  async revoked(tenantId: string, keyId: string): Promise<void> {
    for (const [id, entry] of this.entries) {
      if (entry.tenantId === tenantId && entry.id === keyId) this.entries.delete(id)
    }
    await this.redis?.incr(epochKey(tenantId))
  }
}

function epochKey(tenantId: string): string {
  return `apikeys:epoch:${tenantId}`
}
