// Memory given back while the service is idle (issue 10). V8 keeps the pages its heap grew
// into: after the start (modules, compiled schemas, the garbage of building the app) or a
// burst of load, a resting instance held some 25 MB of empty heap, and V8's own memory
// reducer did not return it. A last-resort collection (the one V8 runs before it would
// fail an allocation: full, compacting, and freeing empty pages) returns them, at the cost
// of a pause of about 70 ms for this service's heap. So it runs only when no request has
// arrived for a while: once after the start, and again after a period of work, never more
// often than MIN_GAP_MS.
//
// It needs Node's --expose-gc, which `npm start` passes; without it nothing runs.

/** V8's gc extension (`--expose-gc`): `flavor: 'last-resort'` is the memory-reducing one. */
export type GcFunction = (options: {
  type: 'major'
  execution: 'sync'
  flavor: 'last-resort'
}) => void

export const QUIET_MS = 1000
export const MIN_GAP_MS = 30_000

/** The decisions, apart from timers: `tick` is called every QUIET_MS. */
export class IdleCompactor {
  private requests = 0
  private seenAtTick = 0
  /** Work (or the start) happened since the last compaction. */
  private dirty = true
  private last = Number.NEGATIVE_INFINITY
  private readonly gc: GcFunction
  private readonly minGapMs: number

  constructor(gc: GcFunction, minGapMs = MIN_GAP_MS) {
    this.gc = gc
    this.minGapMs = minGapMs
  }

  noteRequest(): void {
    this.requests++
  }

  /** Compacts when no request arrived since the last tick; answers whether it did. */
  tick(now: number): boolean {
    const quiet = this.requests === this.seenAtTick
    if (!quiet) this.dirty = true
    this.seenAtTick = this.requests
    if (!quiet || !this.dirty || now - this.last < this.minGapMs) return false
    this.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    this.dirty = false
    this.last = now
    return true
  }
}

/**
 * Starts compacting `server`'s process when idle, if the gc extension is exposed. The
 * timer never keeps the process alive; `stop` ends it.
 */
export function compactWhenIdle(
  server: { on(event: 'request', listener: () => void): unknown },
  log: { debug(obj: object, msg: string): void },
): { stop(): void } | undefined {
  const gc = (globalThis as { gc?: GcFunction }).gc
  if (typeof gc !== 'function') return undefined
  const compactor = new IdleCompactor((options) => {
    const before = process.memoryUsage()
    const started = performance.now()
    gc(options)
    const after = process.memoryUsage()
    log.debug(
      {
        ms: Math.round(performance.now() - started),
        heapTotalMb: [before.heapTotal, after.heapTotal].map(mb),
        rssMb: [before.rss, after.rss].map(mb),
      },
      'heap compacted while idle',
    )
  })
  server.on('request', () => compactor.noteRequest())
  const timer = setInterval(() => compactor.tick(performance.now()), QUIET_MS).unref()
  return { stop: () => clearInterval(timer) }
}

const mb = (bytes: number) => Math.round(bytes / 1048576)
