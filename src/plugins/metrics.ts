// GET /metrics (CONTRACT §10): Prometheus text, only when METRICS_TOKEN is set, and then
// only to `Authorization: Bearer <METRICS_TOKEN>`; without the setting the route does not
// exist (404). One registry per app, so test servers in one process do not share counts.
// Wrong tokens count against a per-address budget (RATE_LIMIT_METRICS_FAILURES), then 429.
//
// What it shows: request rate and latency per route and status; sign-in outcomes by method
// and failure reason (from the audit entries as they are written); password hashes running
// and queued; rate-limit refusals by budget; the revocation cache's size; the database
// pool's use; whether Redis answers; and Node's own process metrics (event-loop delay,
// memory, CPU); webhook delivery attempts by outcome, the queue's depth and how long its
// oldest due delivery has waited (CONTRACT §13).
import type { FastifyInstance } from 'fastify'
import { webhookQueue } from '../db/cross-tenant.ts'
import type { Deps } from '../deps.ts'
import { safeEqual } from '../lib/crypto.ts'
import { AppError } from '../lib/errors.ts'
import { hashLoad } from '../lib/passwords.ts'
import { DELIVERY_OUTCOMES } from '../modules/webhooks/outcomes.ts'

type MetricsDeps = Pick<
  Deps,
  | 'config'
  | 'database'
  | 'reads'
  | 'db'
  | 'clock'
  | 'redis'
  | 'limits'
  | 'audit'
  | 'revocations'
  | 'webhookOutcomes'
  | 'hookCalls'
>

/** Adds GET /metrics and its hooks; prom-client is loaded only when METRICS_TOKEN is set. */
export async function installMetrics(app: FastifyInstance, deps: MetricsDeps): Promise<void> {
  const token = deps.config.metricsToken
  if (!token) return
  const { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } = await import('prom-client')
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  const requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Requests by route pattern, method and status, and how long they took.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the path: ids and slugs would make a series per request.
    const route = request.routeOptions.url ?? 'unmatched'
    const labels = { method: request.method, route, status: String(reply.statusCode) }
    requests.observe(labels, reply.elapsedTime / 1000)
  })

  const signIns = new Counter({
    name: 'auth_sign_ins_total',
    help: 'Sign-ins as audited: outcome success (by method) or failure (by reason).',
    labelNames: ['outcome', 'method', 'reason'],
    registers: [registry],
  })
  deps.audit.subscribe((entries) => {
    for (const entry of entries) {
      const meta = (entry.metadata ?? {}) as { via?: unknown; method?: unknown; reason?: unknown }
      // SSO sign-ins name theirs `method` (CONTRACT §12), the others `via`.
      const named = meta.via ?? meta.method
      const method = typeof named === 'string' ? named : 'password'
      if (entry.action === 'UserLogin') signIns.inc({ outcome: 'success', method, reason: '' })
      if (entry.action === 'UserLoginFailed') {
        const reason = typeof meta.reason === 'string' ? meta.reason : 'unknown'
        signIns.inc({ outcome: 'failure', method, reason })
      }
    }
  })

  const refusals = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused with 429, by budget.',
    labelNames: ['budget'],
    registers: [registry],
  })
  deps.limits.onRefused = (budget) => refusals.inc({ budget })

  new Gauge({
    name: 'password_hashes',
    help: 'argon2id hashes running, and waiting for a slot.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const load = hashLoad()
      this.set({ state: 'running' }, load.running)
      this.set({ state: 'queued' }, load.queued)
    },
  })
  new Gauge({
    name: 'revocation_cache_sessions',
    help: 'Revoked sessions this instance remembers (refused access tokens).',
    registers: [registry],
    collect() {
      this.set(deps.revocations.size)
    },
  })
  new Gauge({
    name: 'db_pool_connections',
    help: 'PostgreSQL pool connections: total, idle, and requests waiting for one.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = deps.database.pool?.()
      if (!pool) return
      this.set({ state: 'total' }, pool.total)
      this.set({ state: 'idle' }, pool.idle)
      this.set({ state: 'waiting' }, pool.waiting)
    },
  })
  const reads = new Counter({
    name: 'db_lagging_reads_total',
    help: 'Reads that may be served by the replica (lists, audit, export), by the server that served them.',
    labelNames: ['server'],
    registers: [registry],
  })
  deps.reads.onRead = (server) => reads.inc({ server })
  new Gauge({
    name: 'db_replica_lag_seconds',
    help: 'How far the read replica is behind the primary, by LSN; absent without DATABASE_READ_URL or while it is down.',
    registers: [registry],
    collect() {
      const lag = deps.reads.lagMs()
      if (lag !== undefined) this.set(lag / 1000)
    },
  })
  new Gauge({
    name: 'redis_up',
    help: '1 while the Redis connection is ready; 0 when it is not; absent without REDIS_URL.',
    registers: [registry],
    collect() {
      if (deps.redis) this.set(deps.redis.status === 'ready' ? 1 : 0)
    },
  })

  new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this instance, by outcome: succeeded, retrying (failed, another attempt scheduled), failed (the last attempt failed; the delivery is Failed), released (given back to the queue by a stopping worker).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      // The tally is the truth (the worker keeps it); the counter shows it.
      this.reset()
      for (const outcome of DELIVERY_OUTCOMES) {
        this.inc({ outcome }, deps.webhookOutcomes.totals[outcome])
      }
    },
  })
  new Counter({
    name: 'hook_calls_total',
    help: 'Blocking hook calls made by this instance (CONTRACT §21), by event and outcome: allow (allowed, or claims added), deny, timeout, error (a non-2xx, an unreadable answer, a refused address, claims over 4 KiB).',
    labelNames: ['event', 'outcome'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [key, count] of deps.hookCalls.totals) {
        const [event, outcome] = key.split(' ')
        this.inc({ event, outcome }, count)
      }
    },
  })
  const hookLatency = new Histogram({
    name: 'hook_call_duration_seconds',
    help: 'How long blocking hook calls took, from the request to the answer (or the failure), by event.',
    labelNames: ['event'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
    registers: [registry],
  })
  deps.hookCalls.observe((event, _outcome, seconds) => hookLatency.observe({ event }, seconds))
  // The queue is the database's, shared by every instance: each instance shows the same.
  new Gauge({
    name: 'webhook_queue_deliveries',
    help: 'Pending webhook deliveries of every tenant: all of them (state pending, in-flight ones included), and those due now (state due).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const queue = await webhookQueue(deps.db, deps.clock.now())
      this.set({ state: 'pending' }, queue.pending)
      this.set({ state: 'due' }, queue.due)
    },
  })
  new Gauge({
    name: 'webhook_queue_oldest_due_seconds',
    help: 'How long the oldest due webhook delivery has waited past its due time (0 when none is due): a growing value means the workers do not keep up, or none runs.',
    registers: [registry],
    async collect() {
      const now = deps.clock.now()
      const { oldestDueAt } = await webhookQueue(deps.db, now)
      this.set(oldestDueAt ? Math.max(0, (now.getTime() - oldestDueAt.getTime()) / 1000) : 0)
    },
  })

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        tags: ['Service'],
        summary: 'Prometheus metrics (only when METRICS_TOKEN is set)',
        security: [{ metricsToken: [] }],
      },
    },
    async (request, reply) => {
      const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]
      if (!given) throw new AppError('token_missing')
      // A guess takes a point of the address's budget before it is compared (CONTRACT §16),
      // and the right token gives it back. Once the budget is spent the right token gets the
      // same 429 as a wrong one, as a held sign-in does (§6): otherwise the answer to a
      // guess made while held would still tell a right guess from a wrong one.
      await deps.limits.hit('metricsFailures', request.clientIp)
      if (!safeEqual(given, token)) throw new AppError('token_invalid')
      await deps.limits.refund('metricsFailures', request.clientIp)
      reply.type(registry.contentType)
      return registry.metrics()
    },
  )
}
