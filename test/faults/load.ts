// The load of a fault scenario: `width` workers, each running one operation at a time,
// until the operation count, the deadline or the scenario's own stop condition is reached.
// Bounded in count, time and concurrency, and aimed at 127.0.0.1 only (see client.ts).
import type { Reply } from './client.ts'

export interface LoadLimits {
  /** Concurrent requests in flight (workers). */
  width: number
  /** Operations started at most. */
  maxOps: number
  /** No operation starts after this many milliseconds. */
  maxMs: number
}

export class Load {
  private stopped = false
  private started = 0
  private running = 0
  private readonly done: Promise<void>
  /** When each operation in flight started. */
  private readonly since = new Map<object, number>()
  /** Every reply an operation recorded, in completion order. */
  readonly replies: (Reply & { kind: string })[] = []

  constructor(limits: LoadLimits, op: (worker: number) => Promise<void>) {
    const deadline = performance.now() + limits.maxMs
    const worker = async (n: number) => {
      await null // the caller's `const load = new Load(…)` is assigned before the first op
      while (!this.stopped && this.started < limits.maxOps && performance.now() < deadline) {
        this.started++
        this.running++
        const token = {}
        this.since.set(token, performance.now())
        try {
          await op(n)
        } finally {
          this.running--
          this.since.delete(token)
        }
      }
    }
    this.done = Promise.all(Array.from({ length: limits.width }, (_, n) => worker(n))).then(
      () => {},
    )
  }

  /** Operations in flight right now. */
  get inFlight(): number {
    return this.running
  }

  /** How long the oldest operation in flight has been running (0 when none is). */
  oldestInFlightMs(): number {
    const oldest = Math.min(...this.since.values())
    return Number.isFinite(oldest) ? performance.now() - oldest : 0
  }

  record(kind: string, reply: Reply): Reply {
    this.replies.push({ ...reply, kind })
    return reply
  }

  /** No new operation starts; resolves once the ones in flight have ended. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.done
  }

  acknowledged(): number {
    return this.replies.filter((r) => r.status >= 200 && r.status < 300).length
  }

  /** Replies whose request started in [from, to) (performance.now() times). */
  startedBetween(from: number, to: number) {
    return this.replies.filter((r) => r.startedAt >= from && r.startedAt < to)
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Waits until `check` is true, polling; answers whether it became true in time. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  stepMs = 50,
) {
  const end = performance.now() + timeoutMs
  while (performance.now() < end) {
    if (await check()) return true
    await sleep(stepMs)
  }
  return check()
}

export function pick<T>(items: T[]): T | undefined {
  return items.length === 0 ? undefined : items[Math.floor(Math.random() * items.length)]
}

/** A compact summary of statuses, e.g. `200×312 503×40 0×2`. */
export function statusSummary(replies: Reply[]): string {
  const counts = new Map<string, number>()
  for (const r of replies) {
    const key = r.status === 0 ? `0(${r.error})` : String(r.status)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([k, n]) => `${k}×${n}`).join(' ')
}
