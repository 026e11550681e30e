// Reads that may go to a streaming replica (DATABASE_READ_URL, CONTRACT §15), and how far
// behind it is. A read goes to the replica only when the replica has replayed every commit
// the primary had made when the read began (its replay LSN against the primary's current
// LSN, both asked at that moment), so a caller always sees its own writes, and every other
// caller's, on any instance. Otherwise, and while the replica is down or lags more than
// DATABASE_READ_MAX_LAG_MS, the read goes to the primary. docs/ARCHITECTURE.md lists which
// reads are routed here and why the others are not.
import type { Database, Db } from './client.ts'
import { openDatabase } from './client.ts'
import { sql } from './orm.ts'

export type ReplicaState = 'ok' | 'lagging' | 'down' | 'disabled'

export interface ReadRouting {
  /**
   * The handle for one read that may be served by the replica: the replica when it has
   * caught up with the primary at this moment, else the primary. Never inside a
   * transaction, never for a read whose answer decides a write.
   */
  reader(): Promise<Db>
  state(): ReplicaState
  /** The replica's lag in milliseconds at the last measurement (undefined: not measured). */
  lagMs(): number | undefined
  /** Told of each read, by the server that serves it (metrics count them). */
  onRead: ((server: 'replica' | 'primary') => void) | undefined
  start(): void
  stop(): Promise<void>
}

/** No replica configured: every read is the primary's. */
export function primaryOnly(db: Db): ReadRouting {
  const routing: ReadRouting = {
    onRead: undefined,
    reader: async () => {
      routing.onRead?.('primary')
      return db
    },
    state: () => 'disabled',
    lagMs: () => undefined,
    start() {},
    stop: async () => {},
  }
  return routing
}

/** `X/Y` (two hexadecimal halves) as one number, for comparison. */
export function parseLsn(lsn: string): bigint {
  const [high, low] = lsn.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

/** How often the lag is measured. */
const MEASURE_MS = 250
/** A probe of either server that takes longer than this counts as a failure. */
const PROBE_TIMEOUT_MS = 1000
/** Primary positions remembered to date the replica's replay position. */
const HISTORY_MS = 60_000

interface Sample {
  at: number
  lsn: bigint
}

export class ReplicaRouting implements ReadRouting {
  onRead: ((server: 'replica' | 'primary') => void) | undefined
  private readonly primary: Db
  private readonly replica: Database
  private readonly maxLagMs: number
  private history: Sample[] = []
  private current: ReplicaState = 'ok'
  private lag: number | undefined
  private timer: NodeJS.Timeout | undefined
  private measuring: Promise<void> | undefined

  private constructor(primary: Db, replica: Database, maxLagMs: number) {
    this.primary = primary
    this.replica = replica
    this.maxLagMs = maxLagMs
  }

  static async open(primary: Db, url: string, maxLagMs: number): Promise<ReplicaRouting> {
    return new ReplicaRouting(primary, await openDatabase(url, ''), maxLagMs)
  }

  state(): ReplicaState {
    return this.current
  }

  lagMs(): number | undefined {
    return this.lag
  }

  async reader(): Promise<Db> {
    if (this.current === 'ok') {
      try {
        const [primaryLsn, replayLsn] = await Promise.all([
          probe(this.primary, 'SELECT pg_current_wal_lsn()::text AS lsn'),
          probe(this.replica.db, 'SELECT pg_last_wal_replay_lsn()::text AS lsn'),
        ])
        if (replayLsn >= primaryLsn) {
          this.onRead?.('replica')
          return this.replica.db
        }
      } catch {
        // Whichever failed, the primary serves this read; the next measurement says which.
      }
    }
    this.onRead?.('primary')
    return this.primary
  }

  start(): void {
    this.timer = setInterval(() => {
      this.measuring ??= this.measure().finally(() => {
        this.measuring = undefined
      })
    }, MEASURE_MS)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.measuring
    await this.replica.close()
  }

  /**
   * Lag by LSN: the primary's position is sampled with its time; the replica's replay
   * position is as old as the oldest sample it has not reached yet.
   */
  private async measure(): Promise<void> {
    const now = Date.now()
    let primaryLsn: bigint
    try {
      primaryLsn = await probe(this.primary, 'SELECT pg_current_wal_lsn()::text AS lsn')
    } catch {
      return // the primary's own trouble is /ready's database check
    }
    this.history.push({ at: now, lsn: primaryLsn })
    while (this.history.length > 1 && (this.history[0] as Sample).at < now - HISTORY_MS) {
      this.history.shift()
    }
    let replayLsn: bigint
    try {
      replayLsn = await probe(this.replica.db, 'SELECT pg_last_wal_replay_lsn()::text AS lsn')
    } catch {
      this.current = 'down'
      this.lag = undefined
      return
    }
    const behind = this.history.find((sample) => sample.lsn > replayLsn)
    this.lag = behind ? Date.now() - behind.at : 0
    this.current = this.lag > this.maxLagMs ? 'lagging' : 'ok'
  }
}

async function probe(db: Db, query: string): Promise<bigint> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('replica probe timed out')), PROBE_TIMEOUT_MS)
  })
  try {
    const result = (await Promise.race([db.execute(sql.raw(query)), timeout])) as unknown as {
      rows: { lsn: string | null }[]
    }
    const lsn = result.rows[0]?.lsn
    // A server that is not a replica answers null to pg_last_wal_replay_lsn().
    if (!lsn) throw new Error(`no LSN from: ${query}`)
    return parseLsn(lsn)
  } finally {
    clearTimeout(timer)
  }
}
