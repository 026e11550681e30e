// Revocation reaches access tokens within seconds on every instance (CONTRACT §4) without
// a query per request: each instance keeps the ids of recently revoked sessions in memory.
// The instance that revokes adds them at once; every instance also reads the database's
// feed of revocations (an index on sessions.revoked_at) once a second, and with Redis the
// ids are also published so that other instances learn of them without waiting.
// An access token lives 15 minutes, so an id is kept for that long and then forgotten.
import type { Redis } from 'ioredis'
import type { Db } from '../../db/client.ts'
import { type RevokedSession, revokedSessionsSince } from '../../db/cross-tenant.ts'
import { ACCESS_TOKEN_TTL } from '../../lib/jwt.ts'
import { whenReady } from '../../lib/redis.ts'

// A deleted tenant's sessions are revoked by the tenants module (CONTRACT §9) with this
// statement of queries.ts, which no file outside sessions/ imports (issue 36).
export { revokeTenantSessions } from './queries.ts'

const CHANNEL = 'auth:sessions-revoked'
// Transactions commit out of timestamp order; reading a little into the past catches
// revocations stamped before the last read but committed after it.
const OVERLAP_MS = 10_000
/** Rows read from the revocation feed per query. */
const FEED_PAGE = 10_000
// Revocations are stamped with the database's clock and read against it, so instances
// whose clocks disagree still see each other's revocations.

export class RevocationCache {
  private readonly revoked = new Map<string, number>()
  private readonly db: Db
  private readonly pollMs: number
  private readonly publisher: Redis | undefined
  private subscriber: Redis | undefined
  private timer: NodeJS.Timeout | undefined
  /** Local monotonic time of the last successful read (undefined: read the last 15 min). */
  private lastRead: number | undefined

  constructor(options: { db: Db; pollMs: number; redis?: Redis }) {
    this.db = options.db
    this.pollMs = options.pollMs
    this.publisher = options.redis
  }

  /** Revoked sessions remembered now (at most the last access-token lifetime's). */
  get size(): number {
    return this.revoked.size
  }

  has(sessionId: string): boolean {
    return this.revoked.has(sessionId)
  }

  /** Records sessions this instance revoked (call after the transaction committed). */
  add(sessionIds: string[]): void {
    if (sessionIds.length === 0) return
    const now = Date.now()
    for (const id of sessionIds) {
      this.revoked.delete(id)
      this.revoked.set(id, now)
    }
    this.publisher?.publish(CHANNEL, sessionIds.join(',')).catch(() => {})
  }

  async start(): Promise<void> {
    await this.poll()
    if (this.publisher) {
      const subscriber = this.publisher.duplicate()
      this.subscriber = subscriber
      subscriber.on('error', () => {})
      subscriber.on('message', (_channel: string, message: string) => {
        const now = Date.now()
        for (const id of message.split(',')) if (id) this.revoked.set(id, now)
      })
      // Without an offline queue SUBSCRIBE fails until the connection is up, so it is sent
      // on each connection (the first one awaited, briefly) rather than at once.
      await whenReady(subscriber, () => subscriber.subscribe(CHANNEL))
    }
    this.timer = setInterval(() => {
      this.poll().catch(() => {})
    }, this.pollMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.subscriber?.disconnect()
  }

  private async poll(): Promise<void> {
    const startedAt = performance.now()
    const windowMs =
      this.lastRead === undefined
        ? (ACCESS_TOKEN_TTL + 60) * 1000
        : startedAt - this.lastRead + OVERLAP_MS
    const now = Date.now()
    // Page by page: a burst of revocations larger than a page is read whole, not cut off.
    let after: RevokedSession | undefined
    for (;;) {
      const page = await revokedSessionsSince(this.db, windowMs, after, FEED_PAGE)
      for (const row of page) if (!this.revoked.has(row.id)) this.revoked.set(row.id, now)
      if (page.length < FEED_PAGE) break
      after = page[page.length - 1]
    }
    this.lastRead = startedAt
    this.forgetOld(now)
  }

  private forgetOld(now: number): void {
    const cutoff = now - (ACCESS_TOKEN_TTL + 60) * 1000
    for (const [id, at] of this.revoked) {
      if (at >= cutoff) break // insertion order is time order
      this.revoked.delete(id)
    }
  }
}
