// What a delivery attempt refuses to wait for or to follow (CONTRACT §13): a receiver that
// never answers fails the attempt at its deadline (10 s by default; shortened here); a body
// without end is read to MAX_RESPONSE_BYTES, then the status stands; deleting an endpoint
// stops its pending deliveries, one in flight included. (Redirects and private addresses:
// delivery.test.ts.) Receivers are this file's own, on 127.0.0.1.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { type TestContext, test } from 'node:test'
import { addHook, deliveries, receiver, verify } from '../../../test/fixtures/webhooks.ts'
import { createTenant, signup, startTestServer } from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { webhookDeliveries } from '../../db/schema.ts'
import { MAX_RESPONSE_BYTES } from '../../lib/egress.ts'
import { ATTEMPT_TIMEOUT_MS, WebhookWorker } from './worker.ts'

async function setup(t: TestContext) {
  const server = await startTestServer(t, {
    webhookAllowPrivate: true,
    webhookRetrySchedule: [1, 1, 1],
  })
  const tenant = await createTenant(server)
  return { server, tenant }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(check: () => boolean, ms = 10_000) {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await sleep(10)
  }
}

test('refusal: a receiver that never answers fails the attempt at its deadline (10 s by default) and it is retried', async (t) => {
  assert.equal(ATTEMPT_TIMEOUT_MS, 10_000, 'CONTRACT §13: 2xx within 10 s')
  const { server, tenant } = await setup(t)
  const held: ServerResponse[] = []
  const sink = await receiver(t, (_n, res) => held.push(res)) // never answered
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  await signup(server, tenant.slug)
  const worker = new WebhookWorker(server.deps, {
    attemptTimeoutMs: 300,
    tenants: [tenant.tenantId],
  })
  const started = performance.now()
  await worker.runOnce()
  const took = performance.now() - started
  assert.equal(sink.received.length, 1)
  assert.ok(took >= 300 && took < 5000, `ended at the deadline (${Math.round(took)} ms)`)
  const [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.status, 'Pending')
  assert.equal(row.attempts, 1)
  assert.equal(row.lastResponseStatus, null)
  assert.equal(row.lastError, 'no answer within 0.3 s')
  assert.ok(row.nextAttemptAt, 'another attempt is scheduled')
})

test(`refusal: a body without end is read to ${MAX_RESPONSE_BYTES} bytes, then the status stands`, async (t) => {
  const { server, tenant } = await setup(t)
  let closedEarly = 0
  // 200, then 64 KiB, then nothing more and no end: before the bound, the attempt waited
  // for the end and timed out.
  const stalls = await receiver(t, (_n, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write(Buffer.alloc(MAX_RESPONSE_BYTES, 'a'))
    res.on('close', () => {
      if (!res.writableFinished) closedEarly++
    })
  })
  // 500, then up to 64 MiB as fast as the socket takes it: never read to the end.
  const floods = await receiver(t, (_n, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' })
    let sent = 0
    const chunk = Buffer.alloc(16 * 1024, 'b')
    const pump = () => {
      while (sent < 64 * 1024 * 1024 && !res.destroyed) {
        sent += chunk.length
        if (!res.write(chunk)) return void res.once('drain', pump)
      }
      res.end()
    }
    res.on('close', () => {
      if (!res.writableFinished) closedEarly++
    })
    pump()
  })
  const ok = await addHook(server, tenant, stalls.url, ['UserSignup'])
  const bad = await addHook(server, tenant, floods.url, ['UserSignup'])
  await signup(server, tenant.slug)
  // A deadline far beyond what either attempt takes, even on a busy machine.
  const worker = new WebhookWorker(server.deps, {
    attemptTimeoutMs: 30_000,
    tenants: [tenant.tenantId],
  })
  const started = performance.now()
  await worker.runOnce()
  assert.ok(performance.now() - started < 20_000, 'neither waited for the deadline')
  verify(ok.secret, stalls.received[0])
  const [good] = await deliveries(server, tenant, ok.webhook.id)
  assert.equal(good.status, 'Succeeded')
  assert.equal(good.lastResponseStatus, 200)
  const [failed] = await deliveries(server, tenant, bad.webhook.id)
  assert.equal(failed.status, 'Pending')
  assert.equal(failed.lastResponseStatus, 500)
  assert.equal(failed.lastError, 'HTTP 500')
  await until(() => closedEarly === 2)
})

test('refusal: deleting an endpoint stops its pending deliveries, one in flight included', async (t) => {
  const { server, tenant } = await setup(t)
  let release: (() => void) | undefined
  const sink = await receiver(t, (n, res) => {
    res.statusCode = 500
    // The third attempt (the second round's first) is held until the endpoint is deleted.
    if (n === 3) release = () => res.end()
    else res.end()
  })
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  await signup(server, tenant.slug)
  await signup(server, tenant.slug)
  const worker = new WebhookWorker(server.deps, { tenants: [tenant.tenantId] })
  // Both fail once; then one of them is in flight when the endpoint goes.
  await worker.runOnce()
  assert.equal(sink.received.length, 2)
  const rows = await deliveries(server, tenant, hook.webhook.id)
  assert.deepEqual(
    rows.map((r) => r.status),
    ['Pending', 'Pending'],
  )
  server.clock.advance(1)
  const held = new WebhookWorker(server.deps, { concurrency: 1, tenants: [tenant.tenantId] })
  const flight = held.runOnce()
  await until(() => release !== undefined)
  const gone = await server.request(
    'DELETE',
    `/v1/${tenant.slug}/webhooks/${hook.webhook.id}`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  assert.equal(gone.status, 200)
  release?.()
  await flight
  const sent = sink.received.length
  server.clock.advance(60)
  await worker.runOnce()
  server.clock.advance(3600)
  await worker.runOnce()
  assert.equal(sink.received.length, sent, 'nothing more is sent')
  const left = await server.deps.db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, tenant.tenantId),
        eq(webhookDeliveries.webhookId, hook.webhook.id),
      ),
    )
  assert.deepEqual(
    left,
    [],
    'its deliveries went with it, and the one in flight was not written back',
  )
})
