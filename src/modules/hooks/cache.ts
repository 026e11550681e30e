// Each tenant's enabled hooks, kept for a short time (CONTRACT §21): a tenant without hooks
// costs no query on a sign-in or a refresh while its entry is fresh (2 s, as tenants); and
// the record of real calls: the tally for /metrics and each hook's last calls (log.ts).
// Both live on Deps, so this file imports nothing of it.
import type { Db } from '../../db/client.ts'
import { FreshMap } from '../tenants/cache.ts'
import type { HookCallLog, HookCallResult } from './log.ts'
import { type Hook, tenantHooks } from './queries.ts'
import type { HookEvent, HookOutcome } from './schemas.ts'

/** Where a failed call's error goes: the server log (pino's `warn`). */
export interface WarnLog {
  warn(fields: object, message: string): void
}

/**
 * A failed call's error as the network library threw it, which the calls log and a test
 * call's answer never show (lib/egress-failure.ts): the operator's to read, at warn.
 */
export function logCallFailure(
  log: WarnLog | undefined,
  hook: Pick<Hook, 'tenantId' | 'id'>,
  event: HookEvent,
  result: HookCallResult,
  test: boolean,
): void {
  if (result.cause === undefined) return
  log?.warn(
    { err: result.cause, tenantId: hook.tenantId, hookId: hook.id, event, test },
    `hook call failed: ${result.error}`,
  )
}

/**
 * Real calls made by this instance: by event and outcome, their latency (for /metrics),
 * a line in the hook's last calls, queued (never awaited by the call's request), and a
 * failure's error in the server log.
 */
export class HookCalls {
  readonly totals = new Map<string, number>()
  private readonly log: HookCallLog | undefined
  private readonly serverLog: WarnLog | undefined
  private readonly observers: ((
    event: HookEvent,
    outcome: HookOutcome,
    seconds: number,
  ) => void)[] = []

  constructor(log?: HookCallLog, serverLog?: WarnLog) {
    this.log = log
    this.serverLog = serverLog
  }

  record(hook: Pick<Hook, 'tenantId' | 'id'>, event: HookEvent, result: HookCallResult): void {
    const { outcome } = result
    const key = `${event} ${outcome}`
    this.totals.set(key, (this.totals.get(key) ?? 0) + 1)
    for (const observe of this.observers) observe(event, outcome, result.durationMs / 1000)
    this.log?.add({ tenantId: hook.tenantId, hookId: hook.id, test: false, result })
    logCallFailure(this.serverLog, hook, event, result, false)
  }

  observe(fn: (event: HookEvent, outcome: HookOutcome, seconds: number) => void): void {
    this.observers.push(fn)
  }
}

/**
 * Each tenant's enabled hooks, kept for a short time. The instance that changes a hook
 * forgets its tenant at once; other instances see the change within 2 s (as tenants).
 */
export class HookCache {
  private readonly db: Db
  private readonly entries = new FreshMap<Hook[]>()
  constructor(db: Db) {
    this.db = db
  }

  async enabled(tenantId: string, event: HookEvent): Promise<Hook | undefined> {
    const now = Date.now()
    let rows = this.entries.fresh(tenantId, now)
    if (!rows) {
      rows = (await tenantHooks(this.db, tenantId)).filter((hook) => hook.enabled)
      this.entries.store(tenantId, rows, now)
    }
    return rows.find((hook) => hook.event === event)
  }

  forget(tenantId: string): void {
    this.entries.delete(tenantId)
  }
}
