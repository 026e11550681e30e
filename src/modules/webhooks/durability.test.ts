// Durable delivery (CONTRACT §13): an event that committed is sent at least once across
// crashes and restarts, each delivery is claimed by one worker at a time, and a stopping
// worker lets its attempts finish or gives them back. The service runs as an operator runs
// it (`npm start`, killed with SIGKILL or stopped with SIGTERM) on a database of this file's
// own (a fresh PostgreSQL database beside DATABASE_URL's, or an embedded one in a DATA_DIR),
// so no other test's worker takes its deliveries and its workers take no other test's.
// Every delivery is verified with the standardwebhooks package.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import pg from 'pg'
import { freePort, Service } from '../../../test/faults/procs.ts'
import {
  addHook,
  deliveries,
  type Received,
  receiver,
  verify,
} from '../../../test/fixtures/webhooks.ts'
import {
  createTenant,
  httpClient,
  signup,
  startTestServer,
  tempDir,
} from '../../../test/helpers.ts'
import { WebhookWorker } from './worker.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`)
    await sleep(50)
  }
}

/**
 * Waits for `done` as long as the service makes progress: what `observe` reports (the
 * delivery log, what arrived) changing, or a delivery scheduled or leased ahead (`dueBy`,
 * its next attempt) not yet due. It fails only after `stallMs` of neither, so a machine busy
 * enough to make every step slow still passes, and a service that stopped working does not.
 */
async function whileProgressing(
  what: string,
  done: () => boolean | Promise<boolean>,
  observe: () => Promise<{ state: string; dueBy: number }>,
  stallMs = 30_000,
) {
  let last: string | undefined
  let since = Date.now()
  while (!(await done())) {
    const { state, dueBy } = await observe()
    if (state !== last) {
      last = state
      since = Date.now()
    }
    if (Date.now() > Math.max(since, dueBy) + stallMs) {
      throw new Error(`no progress for ${stallMs} ms waiting: ${what}; last seen ${state}`)
    }
    await sleep(100)
  }
}

/** The delivery log as progress: each row's state, and when the latest pending one is due. */
function deliveryLog(
  api: Parameters<typeof deliveries>[0],
  tenant: Parameters<typeof deliveries>[1],
  hookId: string,
  received: () => number = () => 0,
) {
  return async () => {
    const rows = await deliveries(api, tenant, hookId)
    const pending = rows.filter((r) => r.status === 'Pending' && r.nextAttemptAt !== null)
    return {
      state: JSON.stringify([
        received(),
        rows.map((r) => [r.id, r.status, r.attempts, r.lastError, r.nextAttemptAt]),
      ]),
      dueBy: Math.max(0, ...pending.map((r) => Date.parse(r.nextAttemptAt ?? ''))),
    }
  }
}

// PGlite is one process's database: two processes cannot share it.
const NEEDS_POSTGRES = process.env.DATABASE_URL
  ? false
  : 'needs DATABASE_URL: two processes share one PostgreSQL (in-process: delivery.test.ts)'

/** A database for this test alone: its environment for the service, dropped when `t` ends. */
async function ownDatabase(t: TestContext): Promise<Record<string, string>> {
  const base = process.env.DATABASE_URL
  if (!base) {
    const dataDir = tempDir('webhooks-durable-')
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    return { DATA_DIR: dataDir }
  }
  const name = `webhooks_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  t.after(async () => {
    const c = new pg.Client({ connectionString: base })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.end()
  })
  const url = new URL(base)
  url.pathname = `/${name}`
  return { DATABASE_URL: url.toString(), DATA_DIR: tempDir('webhooks-durable-') }
}

const READY_WAIT_MS = 300_000

/** The service on `db`, started and ready; SIGKILLed when `t` ends if still running. */
async function start(
  t: TestContext,
  db: Record<string, string>,
  env: Record<string, string>,
  port?: number,
) {
  const chosen = port ?? (await freePort())
  const service = new Service(chosen, {
    PATH: process.env.PATH ?? '',
    NODE_COMPILE_CACHE: join('node_modules', '.cache', 'node-compile-cache'),
    HOST: '127.0.0.1',
    PORT: String(chosen),
    LOG_LEVEL: 'warn',
    // One issuer for every start and instance: tokens survive the restarts.
    PUBLIC_URL: 'http://auth.durable.test',
    JWT_SECRET: 'durable-webhooks-secret-durable-webhooks-0001',
    ENCRYPTION_KEYS: `v1:${Buffer.alloc(32, 9).toString('base64')}`,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1',
    RATE_LIMIT_SIGNUP: '100000/3600',
    RATE_LIMIT_TENANT_CREATION: '100000/3600',
    // Behind the test runner's PgBouncer (TEST_PGBOUNCER=1) the service must run as there.
    ...(process.env.DATABASE_POOL_MODE
      ? { DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE }
      : {}),
    ...db,
    ...env,
  })
  t.after(() => service.kill('SIGKILL'))
  // Readiness is the progress here: waitReady fails at once if the process exits, and a
  // start slowed by a busy machine is waited for (the test's own timeout bounds a hang).
  await service.waitReady(READY_WAIT_MS)
  return { service, api: httpClient(service.base), port: chosen }
}

function ids(received: Received[]) {
  return received.map((r) => String(r.headers['webhook-id']))
}

// Three starts of the service and a 60 s lease to lapse: its waits follow progress (the
// delivery log, readiness), and its own timeout only catches a hang.
test('durable: events committed before a SIGKILL arrive after the restart, once each', {
  timeout: 900_000,
}, async (t) => {
  const db = await ownDatabase(t)
  // The receiver's port is chosen now, but nothing listens on it until the last start.
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/hook`

  // 1. No worker: the event commits, nothing is sent, the process is killed.
  const first = await start(t, db, { WEBHOOK_WORKER: 'false' })
  const tenant = await createTenant(first.api)
  const hook = await addHook(first.api, tenant, url, ['UserSignup'])
  const one = await signup(first.api, tenant.slug)
  assert.equal((await first.service.kill('SIGKILL')).signal, 'SIGKILL')

  // 2. A worker, but the receiver refuses connections: attempts fail and are rescheduled;
  // a second event commits; killed again.
  const second = await start(t, db, { WEBHOOK_WORKER: 'true' })
  const two = await signup(second.api, tenant.slug)
  await whileProgressing(
    'both attempted',
    async () => {
      const rows = await deliveries(second.api, tenant, hook.webhook.id)
      return rows.length === 2 && rows.every((r) => r.attempts >= 1 && r.lastError !== null)
    },
    deliveryLog(second.api, tenant, hook.webhook.id),
  )
  const rows = await deliveries(second.api, tenant, hook.webhook.id)
  assert.ok(
    rows.every((r) => r.status === 'Pending'),
    JSON.stringify(rows),
  )
  assert.equal((await second.service.kill('SIGKILL')).signal, 'SIGKILL')

  // 3. The receiver answers; after the restart both events arrive, signed, each once.
  const sink = await receiver(t, undefined, port)
  const third = await start(t, db, { WEBHOOK_WORKER: 'true' })
  // A claim the kill cut short holds its delivery until its 60 s lease lapses: the log
  // shows it due then, so the wait runs past it.
  const progress = deliveryLog(third.api, tenant, hook.webhook.id, () => sink.received.length)
  await whileProgressing('both delivered', () => sink.received.length >= 2, progress)
  const users = sink.received.map((r) => verify(hook.secret, r).data.event.userId).sort()
  assert.deepEqual(users, [one.user.id, two.user.id].sort())
  assert.deepEqual(ids(sink.received).sort(), rows.map((r) => r.id).sort(), 'same webhook-id')
  await whileProgressing(
    'recorded',
    async () => {
      const after = await deliveries(third.api, tenant, hook.webhook.id)
      return after.every((r) => r.status === 'Succeeded')
    },
    progress,
  )
  await sleep(1500) // a poll more: nothing is sent again
  assert.equal(sink.received.length, 2)
})

test('durable: two instances with workers on one database deliver each event exactly once', {
  skip: NEEDS_POSTGRES,
}, async (t) => {
  const db = await ownDatabase(t)
  const sink = await receiver(t)
  const [a, b] = await Promise.all([
    start(t, db, { WEBHOOK_WORKER: 'true' }),
    start(t, db, { WEBHOOK_WORKER: 'true' }),
  ])
  const tenant = await createTenant(a.api)
  const hook = await addHook(a.api, tenant, sink.url, ['UserSignup', 'UserLogin'])
  // Events committed through both instances, in bursts, while both workers poll.
  const made: string[] = []
  for (let i = 0; i < 12; i++) {
    const user = await signup(i % 2 ? a.api : b.api, tenant.slug)
    made.push(user.user.id)
  }
  const rows = async () => deliveries(a.api, tenant, hook.webhook.id)
  await until('all delivered', async () => (await rows()).every((r) => r.status === 'Succeeded'))
  await sleep(2500) // two polls more of each worker: nothing is sent again
  assert.equal((await rows()).length, 12)
  const sent = ids(sink.received)
  assert.equal(sent.length, 12, 'each delivery sent once')
  assert.equal(new Set(sent).size, 12)
  const users = sink.received.map((r) => verify(hook.secret, r).data.event.userId)
  assert.deepEqual(users.sort(), made.sort())
  for (const row of await rows()) assert.equal(row.attempts, 1)
})

test('durable: SIGTERM lets a delivery in flight finish before the process exits 0', async (t) => {
  const db = await ownDatabase(t)
  let answeredAt = 0
  let arrived = false
  const sink = await receiver(t, (_n, res) => {
    arrived = true
    // The answer comes well after the signal.
    setTimeout(() => {
      answeredAt = performance.now()
      res.end('ok')
    }, 1500)
  })
  const first = await start(t, db, { WEBHOOK_WORKER: 'true' })
  const tenant = await createTenant(first.api)
  const hook = await addHook(first.api, tenant, sink.url, ['UserSignup'])
  await signup(first.api, tenant.slug)
  await until('in flight', () => arrived)
  const exit = await first.service.kill('SIGTERM')
  const exitedAt = performance.now()
  assert.equal(exit.code, 0, first.service.output())
  assert.ok(answeredAt > 0 && exitedAt >= answeredAt, 'exited after the answer')
  // Recorded before the exit: a fresh start without a worker lists it Succeeded.
  const again = await start(t, db, { WEBHOOK_WORKER: 'false' })
  const [row] = await deliveries(again.api, tenant, hook.webhook.id)
  assert.equal(row.status, 'Succeeded')
  assert.equal(row.attempts, 1)
  assert.equal(sink.received.length, 1)
  verify(hook.secret, sink.received[0])
})

// The worker's own stop, in-process, with the drain shortened.
async function inProcess(t: TestContext, answer: (n: number, res: ServerResponse) => void) {
  const server = await startTestServer(t, { webhookAllowPrivate: true })
  const tenant = await createTenant(server)
  const sink = await receiver(t, answer)
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  await signup(server, tenant.slug)
  return { server, tenant, sink, hook }
}

test('durable: stop() waits for an attempt in flight to finish and record its outcome', async (t) => {
  const { server, tenant, sink, hook } = await inProcess(t, (_n, res) => {
    setTimeout(() => res.end('ok'), 300)
  })
  const worker = new WebhookWorker(server.deps, { tenants: [tenant.tenantId] })
  await worker.tick()
  await until('in flight', () => sink.received.length === 1)
  await worker.stop()
  const [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.status, 'Succeeded')
  assert.equal(row.attempts, 1)
  assert.equal(server.deps.webhookOutcomes.totals.succeeded, 1)
})

test('durable: an attempt still running when the drain ends is aborted and released to the queue at once', async (t) => {
  const held: ServerResponse[] = []
  const { server, tenant, sink, hook } = await inProcess(t, (n, res) => {
    if (n === 1)
      held.push(res) // never answered
    else res.end('ok')
  })
  const worker = new WebhookWorker(server.deps, { drainMs: 200, tenants: [tenant.tenantId] })
  await worker.tick()
  await until('in flight', () => sink.received.length === 1)
  const started = performance.now()
  await worker.stop()
  assert.ok(performance.now() - started < 5000, 'not the attempt’s 10 s')
  const [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.status, 'Pending')
  assert.equal(row.attempts, 0, 'the aborted attempt is not counted')
  assert.equal(row.lastError, null)
  assert.ok(new Date(row.nextAttemptAt ?? '') <= server.clock.now(), 'due again now, no lease')
  assert.equal(server.deps.webhookOutcomes.totals.released, 1)
  // Another worker (another instance) takes it without waiting out the lease.
  await new WebhookWorker(server.deps, { tenants: [tenant.tenantId] }).runOnce()
  assert.equal(sink.received.length, 2)
  assert.deepEqual(ids(sink.received), [row.id, row.id])
  verify(hook.secret, sink.received[1])
  const [done] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(done.status, 'Succeeded')
  assert.equal(done.attempts, 1)
})
