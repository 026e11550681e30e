// Webhook delivery (CONTRACT §13): real receivers on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE=true),
// every body checked with the standardwebhooks package; the retry schedule, Retry-After,
// redirects, the egress guard, two instances, test events, manual retries, secret rotation.
import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { addHook, deliveries, receiver, verify } from '../../../test/fixtures/webhooks.ts'
import {
  createTenant,
  signup,
  startSecondInstance,
  startTestServer,
} from '../../../test/helpers.ts'
import { WebhookWorker } from './worker.ts'

async function setup(t: TestContext, overrides = {}) {
  const server = await startTestServer(t, {
    webhookAllowPrivate: true,
    webhookRetrySchedule: [1, 1],
    ...overrides,
  })
  const tenant = await createTenant(server)
  const worker = new WebhookWorker(server.deps, { tenants: [tenant.tenantId] })
  return { server, tenant, worker }
}

test('delivery: a signup reaches a subscribed endpoint as a signed Standard Webhooks body', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const sink = await receiver(t)
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  const user = await signup(server, tenant.slug)
  await worker.runOnce()
  assert.equal(sink.received.length, 1)
  const [got] = sink.received
  const body = verify(hook.secret, got)
  assert.equal(body.type, 'UserSignup')
  assert.equal(body.data.tenantId, tenant.tenantId)
  assert.equal(body.data.event.action, 'UserSignup')
  assert.equal(body.data.event.userId, user.user.id)
  assert.equal(body.timestamp, body.data.event.createdAt)
  assert.equal(got.headers['content-type'], 'application/json')
  const [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(got.headers['webhook-id'], row.id)
  assert.equal(body.data.event.id, row.eventId)
  assert.equal(row.status, 'Succeeded')
  assert.equal(row.attempts, 1)
  assert.equal(row.lastResponseStatus, 200)
  assert.equal(row.nextAttemptAt, null)
  // A forged or altered body does not verify.
  assert.throws(() => verify(hook.secret, { ...got, body: got.body.replace('User', 'Usex') }))
})

test('delivery: data.event is the event exactly as the audit list answers it, userEmail included (§13)', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const sink = await receiver(t)
  const hook = await addHook(server, tenant, sink.url, ['*'])
  const user = await signup(server, tenant.slug)
  const login = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email: user.email,
    password: user.password,
  })
  assert.equal(login.status, 200)
  // An event about no user carries no userEmail, in both.
  const failed = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email: 'nobody@example.com',
    password: 'wrong password 1',
  })
  assert.equal(failed.status, 401)
  await worker.runOnce()
  const delivered = sink.received.map((r) => verify(hook.secret, r).data.event)
  assert.ok(delivered.length >= 3, JSON.stringify(delivered))
  const list = await server.request('GET', `/v1/${tenant.slug}/audit?limit=100`, undefined, {
    token: tenant.admin.accessToken,
  })
  assert.equal(list.status, 200)
  const listed = new Map(list.body.items.map((e: { id: string }) => [e.id, e]))
  for (const event of delivered) {
    assert.deepEqual(event, listed.get(event.id), `${event.action} as the audit list shows it`)
  }
  const signupEvent = delivered.find((e) => e.action === 'UserSignup')
  assert.equal(signupEvent?.userEmail, user.email)
  assert.ok(delivered.some((e) => e.action === 'UserLogin' && e.userEmail === user.email))
  assert.ok(delivered.some((e) => e.action === 'UserLoginFailed' && e.userEmail === undefined))
})

test('delivery: a 500 is retried on the schedule with the same webhook-id, then succeeds', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const sink = await receiver(t, (n, res) => {
    res.statusCode = n === 1 ? 500 : 204
    res.end()
  })
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  await signup(server, tenant.slug)
  await worker.runOnce()
  let [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.status, 'Pending')
  assert.equal(row.attempts, 1)
  assert.equal(row.lastResponseStatus, 500)
  assert.equal(row.lastError, 'HTTP 500')
  const due = new Date(row.nextAttemptAt ?? '').getTime()
  assert.equal(due - server.clock.now().getTime(), 1000, 'the schedule’s first wait')
  await worker.runOnce()
  assert.equal(sink.received.length, 1, 'not before it is due')
  server.clock.advance(1)
  await worker.runOnce()
  assert.equal(sink.received.length, 2)
  assert.equal(sink.received[0].headers['webhook-id'], sink.received[1].headers['webhook-id'])
  verify(hook.secret, sink.received[1])
  ;[row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.status, 'Succeeded')
  assert.equal(row.attempts, 2)
})

test('delivery: failures past the schedule end Failed; a manual retry sends it again under the same id', async (t) => {
  const { server, tenant, worker } = await setup(t)
  let ok = false
  const sink = await receiver(t, (_n, res) => {
    res.statusCode = ok ? 200 : 503
    res.end()
  })
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  await signup(server, tenant.slug)
  for (let i = 0; i < 3; i++) {
    await worker.runOnce()
    server.clock.advance(1)
  }
  let [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(sink.received.length, 3, '1 + the schedule’s length attempts')
  assert.equal(row.status, 'Failed')
  assert.equal(row.nextAttemptAt, null)
  ok = true
  const retry = await server.request(
    'POST',
    `/v1/${tenant.slug}/webhooks/${hook.webhook.id}/deliveries/${row.id}/retry`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  assert.equal(retry.status, 200, JSON.stringify(retry.body))
  await worker.runOnce()
  assert.equal(sink.received.length, 4)
  assert.equal(sink.received[3].headers['webhook-id'], row.id)
  verify(hook.secret, sink.received[3])
  ;[row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.status, 'Succeeded')
})

test('delivery: a Retry-After later than the schedule postpones the next attempt', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const sink = await receiver(t, (_n, res) => {
    res.statusCode = 429
    res.setHeader('retry-after', '120')
    res.end()
  })
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  await signup(server, tenant.slug)
  await worker.runOnce()
  const [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.lastResponseStatus, 429)
  const wait = new Date(row.nextAttemptAt ?? '').getTime() - server.clock.now().getTime()
  assert.equal(wait, 120_000)
})

test('delivery: a redirect is not followed and counts as a failure', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const target = await receiver(t)
  const sink = await receiver(t, (_n, res) => {
    res.statusCode = 307
    res.setHeader('location', target.url)
    res.end()
  })
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  await signup(server, tenant.slug)
  await worker.runOnce()
  assert.equal(sink.received.length, 1)
  assert.equal(target.received.length, 0)
  const [row] = await deliveries(server, tenant, hook.webhook.id)
  assert.equal(row.status, 'Pending')
  assert.equal(row.lastResponseStatus, 307)
  assert.match(row.lastError ?? '', /redirect/)
})

test('delivery: a private address is refused at connect time without WEBHOOK_ALLOW_PRIVATE', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const sink = await receiver(t)
  // Registered while allowed; refused where the worker connects once the switch is off
  // (by IP literal, and by a name that resolves to loopback).
  const byIp = await addHook(server, tenant, sink.url.replace('http:', 'http:'), ['UserSignup'])
  const byName = await addHook(server, tenant, sink.url.replace('127.0.0.1', 'localhost'), [
    'UserSignup',
  ])
  server.deps.config.webhookAllowPrivate = false
  await signup(server, tenant.slug)
  await worker.runOnce()
  assert.equal(sink.received.length, 0)
  for (const hook of [byIp, byName]) {
    const [row] = await deliveries(server, tenant, hook.webhook.id)
    assert.equal(row.status, 'Pending')
    assert.equal(row.lastResponseStatus, null)
    assert.match(row.lastError ?? '', /loopback, private/)
  }
})

test('delivery: two instances deliver each event once', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const second = await startSecondInstance(server)
  t.after(() => second.close())
  const other = new WebhookWorker(second.deps, { tenants: [tenant.tenantId] })
  const sink = await receiver(t)
  await addHook(server, tenant, sink.url, ['UserSignup'])
  for (let i = 0; i < 6; i++) await signup(server, tenant.slug)
  await Promise.all([worker.runOnce(), other.runOnce(), worker.runOnce(), other.runOnce()])
  const ids = sink.received.map((r) => r.headers['webhook-id'])
  assert.equal(ids.length, 6)
  assert.equal(new Set(ids).size, 6)
})

test('delivery: the test event reaches that endpoint only', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const one = await receiver(t)
  const two = await receiver(t)
  const hook = await addHook(server, tenant, one.url, ['UserLogin'])
  await addHook(server, tenant, two.url, ['UserLogin'])
  const res = await server.request(
    'POST',
    `/v1/${tenant.slug}/webhooks/${hook.webhook.id}/test`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  assert.equal(res.status, 200)
  await worker.runOnce()
  assert.equal(one.received.length, 1)
  assert.equal(two.received.length, 0)
  const body = verify(hook.secret, one.received[0])
  assert.equal(body.type, 'WebhookTest')
  assert.equal(one.received[0].headers['webhook-id'], res.body.delivery.id)
})

test('delivery: after a rotation both secrets verify for 24 hours, then only the new one', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const sink = await receiver(t)
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  const rotated = await server.request(
    'POST',
    `/v1/${tenant.slug}/webhooks/${hook.webhook.id}/secret`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  assert.equal(rotated.status, 200)
  const fresh = rotated.body.secret as string
  await signup(server, tenant.slug)
  await worker.runOnce()
  const during = sink.received[0]
  assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2)
  verify(hook.secret, during)
  verify(fresh, during)
  server.clock.advance(24 * 3600 + 1)
  const after = await server.request(
    'POST',
    `/v1/${tenant.slug}/webhooks/${hook.webhook.id}/test`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  assert.equal(after.status, 200)
  await worker.runOnce()
  const later = sink.received[1]
  assert.equal(String(later.headers['webhook-signature']).split(' ').length, 1)
  // The server's clock moved a day on, beyond the package's 5 minutes of tolerance: the
  // signature is checked with its signing function at the header's timestamp.
  const at = new Date(Number(later.headers['webhook-timestamp']) * 1000)
  const id = String(later.headers['webhook-id'])
  assert.equal(later.headers['webhook-signature'], new Webhook(fresh).sign(id, at, later.body))
  assert.notEqual(
    later.headers['webhook-signature'],
    new Webhook(hook.secret).sign(id, at, later.body),
  )
})

test('delivery: an endpoint failing everything for 5 days is disabled and WebhookDisabled audited; a success resets the count', async (t) => {
  const { server, tenant, worker } = await setup(t)
  let ok = false
  const sink = await receiver(t, (_n, res) => {
    res.statusCode = ok ? 200 : 500
    res.end()
  })
  const hook = await addHook(server, tenant, sink.url, ['UserSignup'])
  const read = async () =>
    (
      await server.request('GET', `/v1/${tenant.slug}/webhooks/${hook.webhook.id}`, undefined, {
        token: tenant.admin.accessToken,
      })
    ).body.webhook
  await signup(server, tenant.slug)
  await worker.runOnce()
  const first = await read()
  assert.equal(first.failingSince, server.clock.now().toISOString())
  // A success in between starts the count again.
  ok = true
  server.clock.advance(3 * 24 * 3600)
  await signup(server, tenant.slug)
  await worker.runOnce()
  assert.equal((await read()).failingSince, null)
  ok = false
  await signup(server, tenant.slug)
  await worker.runOnce()
  server.clock.advance(4 * 24 * 3600)
  await signup(server, tenant.slug)
  await worker.runOnce()
  assert.equal((await read()).enabled, true, '4 days of failures')
  server.clock.advance(24 * 3600)
  await signup(server, tenant.slug)
  await worker.runOnce()
  const disabled = await read()
  assert.equal(disabled.enabled, false)
  const audit = await server.request(
    'GET',
    `/v1/${tenant.slug}/audit?action=WebhookDisabled`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  assert.equal(audit.body.items.length, 1)
  assert.equal(audit.body.items[0].metadata.webhookId, hook.webhook.id)
  // A disabled endpoint gets no new deliveries.
  const before = sink.received.length
  await signup(server, tenant.slug)
  server.clock.advance(60)
  await worker.runOnce()
  assert.equal(sink.received.length, before)
})
