// The last calls of each hook, for the console (CONTRACT §21, issue 32): one line per call,
// real or test, with what an admin needs to see whether the endpoint answers (when, the
// outcome, how long, the HTTP status, why it failed) and nothing of who signed in or what
// was said. A real call's line is queued once its answer is judged and written in the
// background (lib/group-commit.ts): a sign-in never waits for it. The lines of a second
// (FLUSH_MS) go in one write, and only each hook's newest HOOK_CALLS_KEPT of them, the
// others being deleted by that write anyway: a busy hook costs the database two statements
// a second, not a row per sign-in. A failed write is logged and its lines dropped.
import type { Db } from '../../db/client.ts'
import { GroupCommit } from '../../lib/group-commit.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { type HookCallRow, recordHookCalls } from './queries.ts'
import { HOOK_CALLS_KEPT, type HookOutcome } from './schemas.ts'

/** How long a real call's line may wait for others before they are written together. */
export const FLUSH_MS = 1000

/** What one call came to (call.ts): the log's line, and a test call's answer. */
export interface HookCallResult {
  outcome: HookOutcome
  /** When the request left. */
  at: Date
  /** From the request to the answer, or to the failure. */
  durationMs: number
  /** The receiver's HTTP status, when one came. */
  status?: number
  /**
   * Why the call failed, in the service's words: never the receiver's, nor the network
   * library's (lib/egress-failure.ts: no address, port or certificate name).
   */
  error?: string
  /** The request's error as thrown: for the server log only, never answered nor stored. */
  cause?: unknown
  /** A deny's message, cleaned and cut (before_sign_up, before_sign_in). */
  message?: string
  /** The claims to merge, the reserved ones dropped (custom_access_token). */
  claims?: Record<string, unknown>
  /** The reserved claims the answer held, dropped. */
  dropped?: string[]
}

export interface HookCallLine {
  tenantId: string
  hookId: string
  test: boolean
  /** Only these of the result are kept: never a message or a claim. */
  result: Pick<HookCallResult, 'outcome' | 'at' | 'durationMs' | 'status' | 'error'>
}

export class HookCallLog {
  private readonly writer: GroupCommit<HookCallRow>

  constructor(db: Db, onError: (error: unknown) => void) {
    this.writer = new GroupCommit((batch) => recordHookCalls(db, newestOfEach(batch)), onError, {
      delayMs: FLUSH_MS,
    })
  }

  add({ tenantId, hookId, test, result }: HookCallLine): void {
    this.writer.add({
      tenantId,
      id: uuidv7(result.at.getTime()),
      hookId,
      at: result.at,
      outcome: result.outcome,
      durationMs: Math.round(result.durationMs),
      status: result.status ?? null,
      test,
      error: result.error ?? null,
    })
  }

  /** Every line added so far is written now (or its batch failed and was logged). */
  flushed(): Promise<void> {
    return this.writer.flushed()
  }
}

/** Each hook's newest HOOK_CALLS_KEPT lines of a batch (queued oldest first), in order. */
function newestOfEach(batch: HookCallRow[]): HookCallRow[] {
  const seen = new Map<string, number>()
  const kept: HookCallRow[] = []
  for (let i = batch.length - 1; i >= 0; i--) {
    const row = batch[i] as HookCallRow
    const key = `${row.tenantId}/${row.hookId}`
    const count = seen.get(key) ?? 0
    if (count >= HOOK_CALLS_KEPT) continue
    seen.set(key, count + 1)
    kept.push(row)
  }
  return kept.reverse()
}
