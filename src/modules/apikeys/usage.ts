// `lastUsedAt` without a database write per request (issue 4): each instance keeps the
// latest use of every key in memory and writes them all in one statement every few
// seconds, and once more when it closes. Validity is never cached: every request still
// reads the key, so a revoked key is refused on the very next request on every instance.
// The cost of the batching: after a crash, up to FLUSH_MS of last-use times are lost, and
// another instance's uses show up in the list up to FLUSH_MS late.
import type { Db } from '../../db/client.ts'
import { type KeyUse, recordKeyUses } from './queries.ts'

export const FLUSH_MS = 5000
const BATCH = 500

export class ApiKeyUsage {
  private readonly db: Db
  private pending = new Map<string, KeyUse>()
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()

  constructor(db: Db) {
    this.db = db
  }

  touch(tenantId: string, keyId: string, at: Date): void {
    const id = `${tenantId}/${keyId}`
    const seen = this.pending.get(id)
    if (!seen || seen.at < at) this.pending.set(id, { tenantId, keyId, at })
  }

  /** A use not yet written, so this instance's list is never behind its own requests. */
  unwritten(tenantId: string, keyId: string): Date | undefined {
    return this.pending.get(`${tenantId}/${keyId}`)?.at
  }

  start(): void {
    this.timer = setInterval(() => {
      this.flush().catch(() => {})
    }, FLUSH_MS)
    this.timer.unref()
  }

  /** Writes every use recorded so far; flushes run one at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => {}).then(() => this.write())
    return this.flushing
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.flush()
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return
    const uses = [...this.pending.values()]
    this.pending = new Map()
    try {
      for (let i = 0; i < uses.length; i += BATCH) {
        await recordKeyUses(this.db, uses.slice(i, i + BATCH))
      }
    } catch (error) {
      // Keep them for the next flush (a newer use recorded meanwhile wins).
      for (const u of uses) this.touch(u.tenantId, u.keyId, u.at)
      throw error
    }
  }
}
