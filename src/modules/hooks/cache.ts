// Each tenant's enabled hooks, kept for a short time (CONTRACT §21): a tenant without hooks
// costs no query on a sign-in or a refresh while its entry is fresh (2 s, as tenants); and
// the record of real calls: the tally for /metrics and each hook's last calls (log.ts).
// Both live on Deps, so this file imports nothing of it.
import type { Db } from '../../db/client.ts'
import { FreshMap } from '../tenants/cache.ts'
import type { HookCallLog, HookCallResult } from './log.ts'
import { type Hook, tenantHooks } from './queries.ts'
import type { HookEvent, HookOutcome } from './schemas.ts'

/**
 * Real calls made by this instance: by event and outcome, their latency (for /metrics),
 * and a line in the hook's last calls, queued (never awaited by the call's request).
 */
export class HookCalls {
  readonly totals = new Map<string, number>()
  private readonly log: HookCallLog | undefined
  private readonly observers: ((
    event: HookEvent,
    outcome: HookOutcome,
    seconds: number,
  ) => void)[] = []

  constructor(log?: HookCallLog) {
    this.log = log
  }

  record(hook: Pick<Hook, 'tenantId' | 'id'>, event: HookEvent, result: HookCallResult): void {
    const { outcome } = result
    const key = `${event} ${outcome}`
    this.totals.set(key, (this.totals.get(key) ?? 0) + 1)
    for (const observe of this.observers) observe(event, outcome, result.durationMs / 1000)
    this.log?.add({ tenantId: hook.tenantId, hookId: hook.id, test: false, result })
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
