// The webhook delivery worker (CONTRACT §13), on every instance: claims due deliveries
// (db/cross-tenant.ts claimDueDeliveries: FOR UPDATE SKIP LOCKED, next_attempt_at moved
// ahead as a lease, so each is taken by one instance at a time and taken again only after
// a crash), POSTs each under Standard Webhooks, and records the outcome. A failure is
// retried on WEBHOOK_RETRY_SCHEDULE (or later, when the endpoint's Retry-After says so,
// capped at 24 h), then Failed; an endpoint failing everything for 5 days is disabled.
import { claimDueDeliveries } from '../../db/cross-tenant.ts'
import type { Deps } from '../../deps.ts'
import { egressPost } from '../../lib/egress.ts'
import { egressFailure } from '../../lib/egress-failure.ts'
import { GroupCommit } from '../../lib/group-commit.ts'
import { SYSTEM_ACTOR } from '../audit/recorder.ts'
import * as store from './queries.ts'
import { openSecret, sign } from './secret.ts'

type WorkerDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'db' | 'config' | 'webhookOutcomes'>

/** CONTRACT §13: a 2xx within 10 s succeeds. */
export const ATTEMPT_TIMEOUT_MS = 10_000
/** Longer than an attempt: a claimed delivery is not taken again while it runs. */
export const LEASE_MS = 60_000
export const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000

/** Retry-After (seconds or an HTTP date) as milliseconds from `now`, capped at 24 h. */
export function retryAfterMs(value: string | string[] | undefined, now: Date): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (!raw) return undefined
  let ms: number
  if (/^\d+$/.test(raw.trim())) ms = Number(raw.trim()) * 1000
  else {
    const at = Date.parse(raw)
    if (Number.isNaN(at)) return undefined
    ms = at - now.getTime()
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS)
}

export interface WorkerOptions {
  /** How often to look for due deliveries. */
  pollMs?: number
  /** Attempts in flight at once, per instance. */
  concurrency?: number
  /** An attempt's deadline, connect to answer (default 10 s, CONTRACT §13; tests shorten it). */
  attemptTimeoutMs?: number
  /** How long a claim holds a delivery (default 60 s; longer than an attempt). */
  leaseMs?: number
  /**
   * On stop, how long attempts in flight may still finish (default: an attempt's deadline,
   * so they all end on their own); those still running then are aborted and released.
   */
  drainMs?: number
  /**
   * Claim only these tenants' deliveries. The service's worker takes every tenant's; a test
   * on the shared PostgreSQL test database keeps its worker to its own tenants, so that it
   * neither takes other tests' deliveries nor loses its own to theirs.
   */
  tenants?: readonly string[]
}

interface InFlight {
  done: Promise<void>
  abort: AbortController
}

export class WebhookWorker {
  private readonly deps: WorkerDeps
  private readonly pollMs: number
  private readonly concurrency: number
  private readonly attemptTimeoutMs: number
  private readonly leaseMs: number
  private readonly drainMs: number
  private readonly tenants: readonly string[] | undefined
  private readonly inFlight = new Set<InFlight>()
  /**
   * Successes, written in batches: one statement for every success that ended while the
   * last one ran (group commit), rather than a round trip that held each attempt's slot. A
   * batch lost to a crash leaves its deliveries leased, then sent again: at least once.
   */
  private readonly successes: GroupCommit<store.Success>
  private timer: NodeJS.Timeout | undefined
  private stopped = true
  private ticking: Promise<number> | undefined
  /** Told of errors the worker survives (logged by the app). */
  onError: ((error: unknown) => void) | undefined
  /**
   * Told of an attempt's request error as thrown (logged by the app): the delivery keeps
   * only its fixed phrase (lib/egress-failure.ts), this is where the rest goes.
   */
  onAttemptError:
    | ((error: unknown, at: { tenantId: string; webhookId: string; deliveryId: string }) => void)
    | undefined

  constructor(deps: WorkerDeps, options: WorkerOptions = {}) {
    this.deps = deps
    this.pollMs = options.pollMs ?? 1000
    this.concurrency = options.concurrency ?? 8
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS
    this.leaseMs = Math.max(options.leaseMs ?? LEASE_MS, this.attemptTimeoutMs + 5000)
    this.drainMs = options.drainMs ?? this.attemptTimeoutMs
    this.tenants = options.tenants
    this.successes = new GroupCommit(
      (batch) => store.recordSuccesses(deps.db, batch),
      (error) => this.onError?.(error),
    )
  }

  start() {
    if (!this.stopped) return
    this.stopped = false
    this.schedule(this.pollMs)
  }

  // A tick that claimed something may have left more due: the next one comes as soon as an
  // attempt frees its slot. Only a tick that found nothing waits a whole poll.
  private schedule(delayMs: number) {
    if (this.stopped) return
    this.timer = setTimeout(async () => {
      let next = this.pollMs
      try {
        this.ticking = this.tick()
        if ((await this.ticking) > 0) {
          // Claimed in batches: the next claim once half the slots are free.
          while (this.inFlight.size > this.concurrency / 2 && !this.stopped) {
            await Promise.race([...this.inFlight].map((f) => f.done))
          }
          next = 0
        }
      } catch (error) {
        this.onError?.(error)
      }
      this.schedule(next)
    }, delayMs)
    this.timer.unref()
  }

  /**
   * Stops claiming (SIGTERM). Attempts in flight may finish for `drainMs`; any still running
   * then is aborted and its delivery released: due again at once, its attempt not counted,
   * so another instance takes it without waiting out the lease. (A process that dies instead
   * leaves its claims to lapse with the lease.)
   */
  async stop() {
    this.stopped = true
    clearTimeout(this.timer)
    await this.ticking?.catch(() => 0)
    const all = Promise.allSettled([...this.inFlight].map((f) => f.done))
    let timer: NodeJS.Timeout | undefined
    const drained = await Promise.race([
      all.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), this.drainMs)
      }),
    ])
    clearTimeout(timer)
    if (!drained) {
      for (const flight of this.inFlight) flight.abort.abort()
      await all
    }
    await this.successes.flushed()
  }

  /** Attempts in flight ended, and the successes they left written. */
  private async settled() {
    await Promise.allSettled([...this.inFlight].map((f) => f.done))
    await this.successes.flushed()
  }

  /** Claims what is due and free slots allow, and starts those attempts. */
  async tick(): Promise<number> {
    const free = this.concurrency - this.inFlight.size
    if (free <= 0) return 0
    const now = this.deps.clock.now()
    const leaseUntil = new Date(now.getTime() + this.leaseMs)
    // Claims and outcomes commit without waiting for the disk (db/client.ts FLUSH_LATER):
    // one lost in a database crash only sends a delivery again, which at-least-once allows.
    const claimed = await claimDueDeliveries(this.deps.db, now, leaseUntil, free, this.tenants)
    // Those whose webhook was deleted meanwhile went with it.
    for (const found of await store.findClaimed(this.deps.db, claimed)) {
      const abort = new AbortController()
      const flight: InFlight = {
        abort,
        done: this.attempt(found, leaseUntil, abort.signal)
          .catch((error) => this.onError?.(error))
          .finally(() => this.inFlight.delete(flight)),
      }
      this.inFlight.add(flight)
    }
    return claimed.length
  }

  /** Delivers everything due now, attempts awaited (tests, and a drain). */
  async runOnce(): Promise<void> {
    while ((await this.tick()) > 0) await this.settled()
    await this.settled()
  }

  private async attempt(
    { delivery, webhook }: { delivery: store.Delivery; webhook: store.Webhook },
    leaseUntil: Date,
    signal: AbortSignal,
  ) {
    const { deps } = this
    const { tenantId, id } = delivery
    const now = deps.clock.now()
    if (!webhook.enabled) {
      await store.recordAttempt(deps.db, tenantId, id, {
        status: 'Failed',
        lastResponseStatus: null,
        lastError: 'the endpoint is disabled',
        nextAttemptAt: null,
      })
      deps.webhookOutcomes.add('failed')
      return
    }
    const secrets = [openSecret(deps.cipher, tenantId, webhook.id, 'current', webhook.secretEnc)]
    if (webhook.previousSecretEnc && webhook.previousUntil && webhook.previousUntil > now) {
      secrets.push(
        openSecret(deps.cipher, tenantId, webhook.id, 'previous', webhook.previousSecretEnc),
      )
    }
    const body = JSON.stringify(delivery.payload)
    const timestamp = Math.floor(now.getTime() / 1000)
    const signatures = secrets
      .filter((s): s is string => s !== undefined)
      .map((s) => sign(s, delivery.id, timestamp, body))
    let status: number | null = null
    let error: string | null = null
    let retryAfter: number | undefined
    try {
      const res = await egressPost(
        webhook.url,
        body,
        {
          'content-type': 'application/json',
          'user-agent': 'tenant-auth-webhooks',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatures.join(' '),
        },
        { allowPrivate: deps.config.webhookAllowPrivate, timeoutMs: this.attemptTimeoutMs, signal },
      )
      status = res.status
      if (status < 200 || status > 299) {
        error =
          status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}`
        retryAfter = retryAfterMs(res.headers['retry-after'], now)
      }
    } catch (caught) {
      if (signal.aborted) {
        // Stopping: the attempt is given back, as if never claimed (its lease still ours).
        await store.releaseClaim(deps.db, tenantId, id, leaseUntil, deps.clock.now())
        deps.webhookOutcomes.add('released')
        return
      }
      // A fixed phrase by the error's class, never the library's message: the deliveries
      // list is the tenant admin's, and the message names the addresses, ports and
      // certificate names the service met (a test event would map them). The error itself
      // goes to the server log.
      error = egressFailure(caught)
      this.onAttemptError?.(caught, { tenantId, webhookId: webhook.id, deliveryId: delivery.id })
    }
    if (error === null) {
      // Written with others in one statement; the slot is free at once (the lease holds
      // the row meanwhile).
      this.successes.add({ tenantId, id, status: status ?? 0 })
      if (webhook.failingSince) await store.clearFailing(deps.db, tenantId, webhook.id)
      deps.webhookOutcomes.add('succeeded')
      return
    }
    await this.failed(delivery, webhook, { status, error, retryAfter, now })
  }

  private async failed(
    delivery: store.Delivery,
    webhook: store.Webhook,
    outcome: { status: number | null; error: string; retryAfter: number | undefined; now: Date },
  ) {
    const { deps } = this
    const { tenantId } = delivery
    const schedule = deps.config.webhookRetrySchedule
    // attempts counts this one (the claim added it).
    const wait = schedule[delivery.attempts - 1]
    const last = wait === undefined
    const delayMs = last ? 0 : Math.max(wait * 1000, outcome.retryAfter ?? 0)
    await store.recordAttempt(deps.db, tenantId, delivery.id, {
      status: last ? 'Failed' : 'Pending',
      lastResponseStatus: outcome.status,
      lastError: outcome.error,
      nextAttemptAt: last ? null : new Date(outcome.now.getTime() + delayMs),
    })
    const since = await store.markFailing(deps.db, tenantId, webhook.id, outcome.now)
    deps.webhookOutcomes.add(last ? 'failed' : 'retrying')
    if (since && outcome.now.getTime() - since.getTime() >= DISABLE_AFTER_MS) {
      await deps.db.transaction(async (tx) => {
        const cutoff = new Date(outcome.now.getTime() - DISABLE_AFTER_MS)
        if (!(await store.disableFailing(tx, tenantId, webhook.id, cutoff))) return
        await deps.audit.record(tx, tenantId, SYSTEM_ACTOR, [
          {
            action: 'WebhookDisabled',
            metadata: {
              webhookId: webhook.id,
              url: webhook.url,
              failingSince: since.toISOString(),
            },
          },
        ])
      })
    }
  }
}
