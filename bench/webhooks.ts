// Webhook delivery for npm run bench (bench/run.ts; CONTRACT §13):
//   deliveries per second, the service's worker draining a queue of BENCH_WEBHOOK_DELIVERIES
//   (default 2,000) to a local receiver, vs a bare loop (this file run as a process) that
//   signs and POSTs the same bodies with the same code (lib/egress.ts) and the same number
//   in flight (the worker's 8), from memory: the ratio is the queue's cost   ≥ 0.5
//   sign-in throughput of a tenant with one subscribed endpoint (its worker delivering every
//   UserLogin meanwhile) vs a tenant without                                 ≥ 0.95
// Both are timed at the receiver: first arrival to last.
import { createHmac, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import pg from 'pg'
import { egressPost } from '../src/lib/egress.ts'

/** As the worker has it by default (src/modules/webhooks/worker.ts). */
export const WORKER_CONCURRENCY = 8

/** A receiver answering 204 at once; counts arrivals and times them. */
export class Receiver {
  private server: Server | undefined
  count = 0
  first = 0
  last = 0
  private waiting: { n: number; resolve: () => void } | undefined

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        const now = performance.now()
        if (this.count === 0) this.first = now
        this.last = now
        this.count++
        res.statusCode = 204
        res.end()
        if (this.waiting && this.count >= this.waiting.n) this.waiting.resolve()
      })
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
  }

  reset() {
    this.count = 0
    this.first = 0
    this.last = 0
  }

  /** Waits for `n` arrivals; answers their rate, first to last, per second. */
  async rate(n: number, timeoutMs = 120_000): Promise<number> {
    if (this.count < n) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver: ${this.count} of ${n} after ${timeoutMs} ms`)),
          timeoutMs,
        )
        this.waiting = {
          n,
          resolve: () => {
            clearTimeout(timer)
            resolve()
          },
        }
      })
      this.waiting = undefined
    }
    return (n - 1) / ((this.last - this.first) / 1000)
  }

  close() {
    this.server?.closeAllConnections()
    this.server?.close()
  }
}

/** The body a login's delivery carries, as the outbox writes it. */
export function loginBody(tenantId: string): Record<string, unknown> {
  const createdAt = new Date().toISOString()
  return {
    type: 'UserLogin',
    timestamp: createdAt,
    data: {
      tenantId,
      event: {
        id: crypto.randomUUID(),
        action: 'UserLogin',
        actorType: 'user',
        actorId: crypto.randomUUID(),
        userId: crypto.randomUUID(),
        ip: '127.0.0.1',
        userAgent: 'autocannon',
        metadata: { via: 'password', sessionId: crypto.randomUUID() },
        createdAt,
      },
    },
  }
}

/** Queues `n` due deliveries of `body` for the webhook, in one statement. */
export async function seedDeliveries(
  client: pg.Client,
  tenantId: string,
  webhookId: string,
  n: number,
  body: Record<string, unknown>,
): Promise<void> {
  await client.query(
    `INSERT INTO webhook_deliveries
       (tenant_id, id, webhook_id, event_id, event_type, payload, status, attempts,
        next_attempt_at, created_at)
     SELECT $1, gen_random_uuid(), $2, gen_random_uuid(), 'UserLogin', $3::jsonb, 'Pending', 0,
        now(), now()
     FROM generate_series(1, $4)`,
    [tenantId, webhookId, JSON.stringify(body), n],
  )
}

// Run as a process: the bare loop. Reads the bodies first (not timed), then signs and posts
// each as the worker does, WORKER_CONCURRENCY at a time; prints its CPU seconds.
if (import.meta.main) {
  const { DATABASE_URL, BARE_TENANT, BARE_WEBHOOK, BARE_URL } = process.env
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  const { rows } = await client.query(
    'SELECT id, payload FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2',
    [BARE_TENANT, BARE_WEBHOOK],
  )
  await client.end()
  const key = randomBytes(32)
  const queue = rows.map((r) => ({ id: r.id as string, body: JSON.stringify(r.payload) }))
  const cpuBefore = process.cpuUsage()
  const worker = async () => {
    for (let next = queue.pop(); next; next = queue.pop()) {
      const timestamp = Math.floor(Date.now() / 1000)
      const mac = createHmac('sha256', key).update(`${next.id}.${timestamp}.${next.body}`)
      await egressPost(
        BARE_URL ?? '',
        next.body,
        {
          'content-type': 'application/json',
          'user-agent': 'tenant-auth-webhooks',
          'webhook-id': next.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': `v1,${mac.digest('base64')}`,
        },
        { allowPrivate: true, timeoutMs: 10_000 },
      )
    }
  }
  await Promise.all(Array.from({ length: WORKER_CONCURRENCY }, worker))
  const cpu = process.cpuUsage(cpuBefore)
  console.log(JSON.stringify({ cpuSeconds: (cpu.user + cpu.system) / 1e6 }))
}
