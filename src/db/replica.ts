// Reads that may lag, from a streaming replica (DATABASE_READ_URL, CONTRACT §15): the
// lists, the audit log and its export. A caller always sees its own writes: a read goes to
// the replica only when the replica has replayed the primary's WAL up to where it stood
// when the read began (so every write committed before, by any instance), and only while
// the replica is up and within DATABASE_READ_MAX_LAG_MS; otherwise the primary answers.
//
// Lag is measured by LSN, not by replay timestamps (which stand still while the primary is
// idle): every POLL_MS the primary's current LSN is sampled with the time, and the lag is
// how long ago the primary first stood past the replica's replay LSN (0 once it is caught up).
import pg from 'pg'
import { type Db, type Handle, type PoolMode, poolClient } from './client.ts'
import { postgresDriver, sql } from './orm.ts'
import * as schema from './schema.ts'

export type ReplicaCheck = 'ok' | 'lagging' | 'down' | 'disabled'

const POLL_MS = 200
/** Samples older than this are dropped: the lag is then at least this long. */
const WINDOW_MS = 60_000

/** `16/B374D848` → one comparable number. */
export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split('/')
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`)
}

async function currentLsn(primary: Handle): Promise<bigint> {
  const result = (await primary.execute(
    sql`SELECT pg_current_wal_lsn()::text AS lsn`,
  )) as unknown as {
    rows: { lsn: string }[]
  }
  return lsnValue(result.rows[0].lsn)
}

export class ReadReplica {
  readonly db: Db
  private readonly pool: pg.Pool
  private readonly primary: Db
  private readonly maxLagMs: number
  private samples: { at: number; lsn: bigint }[] = []
  private timer: NodeJS.Timeout | undefined
  private state: 'ok' | 'lagging' | 'down' = 'down'
  /** The last measured lag (ms); Infinity while down. */
  lagMs = Number.POSITIVE_INFINITY

  constructor(options: { url: string; primary: Db; maxLagMs: number; poolMode: PoolMode }) {
    this.primary = options.primary
    this.maxLagMs = options.maxLagMs
    this.pool = new pg.Pool({
      connectionString: options.url,
      Client: poolClient(options.poolMode),
      max: 10,
      // A replica that does not answer is bypassed quickly: the primary serves meanwhile.
      connectionTimeoutMillis: 1000,
      query_timeout: 5000,
      keepAlive: true,
    })
    this.pool.on('error', () => {})
    this.pool.on('connect', (client) => client.on('error', () => {}))
    this.db = postgresDriver().drizzle(this.pool, { schema }) as unknown as Db
  }

  get check(): ReplicaCheck {
    return this.state
  }

  async start(): Promise<void> {
    await this.measure().catch(() => {})
    this.timer = setInterval(() => {
      this.measure().catch(() => {})
    }, POLL_MS)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.pool.end().catch(() => {})
  }

  /**
   * The handle for a read that may lag: the replica when it is within the lag budget and
   * has replayed everything the primary had committed when this read began, else the primary.
   */
  async handle(): Promise<Db> {
    if (this.state !== 'ok') return this.primary
    try {
      const [wanted, replayed] = await Promise.all([currentLsn(this.primary), this.replayLsn()])
      return replayed !== undefined && replayed >= wanted ? this.db : this.primary
    } catch {
      return this.primary
    }
  }

  private async replayLsn(): Promise<bigint | undefined> {
    const result = await this.pool.query('SELECT pg_last_wal_replay_lsn()::text AS lsn')
    const lsn = result.rows[0]?.lsn as string | null
    return lsn ? lsnValue(lsn) : undefined
  }

  private async measure(): Promise<void> {
    const now = Date.now()
    const primaryLsn = await currentLsn(this.primary)
    this.samples.push({ at: now, lsn: primaryLsn })
    while (this.samples.length > 1 && this.samples[0].at < now - WINDOW_MS) this.samples.shift()
    let replayed: bigint | undefined
    try {
      replayed = await this.replayLsn()
    } catch {
      replayed = undefined
    }
    if (replayed === undefined) {
      // Unreachable, or not a standby (nothing replayed): never read from it.
      this.state = 'down'
      this.lagMs = Number.POSITIVE_INFINITY
      return
    }
    const ahead = this.samples.find((s) => s.lsn > replayed)
    this.lagMs = ahead ? now - ahead.at : 0
    this.state = this.lagMs > this.maxLagMs ? 'lagging' : 'ok'
  }
}

/** Where the reads that may lag go: a ReadReplica, or the primary when there is none. */
export interface ReadRouter {
  handle(): Promise<Db>
  readonly check: ReplicaCheck
  stop(): Promise<void>
}

export function primaryOnly(primary: Db): ReadRouter {
  return {
    handle: async () => primary,
    check: 'disabled',
    stop: async () => {},
  }
}
