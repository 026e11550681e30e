// GET /metrics (CONTRACT §10): absent (404) unless METRICS_TOKEN is set; then Prometheus
// text to `Bearer <METRICS_TOKEN>` only (401 with the envelope otherwise), with the series
// the README lists, moving as the service works.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { DEFAULT_LIMITS } from '../src/lib/limits.ts'
import { WebhookWorker } from '../src/modules/webhooks/worker.ts'
import { expectError } from './envelope.ts'
import { addHook, receiver } from './fixtures/webhooks.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startTestServer,
  type TestServer,
} from './helpers.ts'

const TOKEN = 'metrics-token-for-the-test-0001'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t, {
    metricsToken: TOKEN,
    limits: { ...GENEROUS_LIMITS, signup: { points: 1, seconds: 3600 } },
  })
})

async function scrape(from: { url: string } = server): Promise<string> {
  const res = await fetch(`${from.url}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  })
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/)
  return res.text()
}

/** The value of one series, or 0 when it is not there yet. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

test('without METRICS_TOKEN there is no /metrics', async (t) => {
  const plain = await startTestServer(t)
  expectError(await plain.request('GET', '/metrics'), 404, 'route_not_found')
})

test('a missing or wrong token is 401 with the envelope', async () => {
  expectError(await server.request('GET', '/metrics'), 401, 'token_missing')
  const wrong = await server.request('GET', '/metrics', undefined, { token: 'not-the-token' })
  expectError(wrong, 401, 'token_invalid')
})

test('rule: wrong metrics tokens are limited per address; then 429, even for the right token', async (t) => {
  assert.deepEqual(DEFAULT_LIMITS.metricsFailures, { points: 20, seconds: 300 })
  const limited = await startTestServer(t, {
    metricsToken: TOKEN,
    limits: { ...GENEROUS_LIMITS, metricsFailures: DEFAULT_LIMITS.metricsFailures },
  })
  const ip = randomIp()
  const get = (token: string | undefined, from = ip) =>
    limited.request('GET', '/metrics', undefined, { token, ip: from })
  // The right token gives its point back: scrapes never use up the budget.
  for (let i = 0; i < 25; i++) assert.equal((await get(TOKEN)).status, 200)
  for (let i = 0; i < 20; i++) expectError(await get(`guess-${i}`), 401, 'token_invalid')
  const held = await get('guess-20')
  expectError(held, 429, 'rate_limited')
  const retryAfter = Number(held.headers.get('retry-after'))
  assert.ok(retryAfter >= 1 && retryAfter <= 300, `Retry-After ${retryAfter}`)
  expectError(await get(TOKEN), 429, 'rate_limited')
  // Another address is not held.
  assert.equal((await get(TOKEN, randomIp())).status, 200)
})

test('requests, sign-ins, refusals and process metrics are counted', async () => {
  const tenant = await createTenant(server)
  const user = await signup(server, tenant.slug)
  const before = await scrape()
  const loginRoute = 'method="POST",route="/v1/:tenantSlug/auth/login",status="200"'
  const ok = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email: user.email,
    password: user.password,
  })
  assert.equal(ok.status, 200)
  const wrong = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email: user.email,
    password: 'not-the-password-1',
  })
  assert.equal(wrong.status, 401)
  // The signup budget is one point: the second signup from one address is refused.
  const ip = randomIp()
  for (let i = 0; i < 2; i++) {
    await server.request(
      'POST',
      `/v1/${tenant.slug}/auth/signup`,
      { email: `m${i}-${Date.now()}@example.com`, password: 'plum-orbit-canvas-77' },
      { ip },
    )
  }
  const after = await scrape()

  const count = `http_request_duration_seconds_count{${loginRoute}}`
  assert.equal(value(after, count) - value(before, count), 1)
  const success = 'auth_sign_ins_total{outcome="success",method="password",reason=""}'
  assert.equal(value(after, success) - value(before, success), 1)
  const failure =
    'auth_sign_ins_total{outcome="failure",method="password",reason="invalid_credentials"}'
  assert.equal(value(after, failure) - value(before, failure), 1)
  const refused = 'rate_limit_refusals_total{budget="signup"}'
  assert.equal(value(after, refused) - value(before, refused), 1)
  for (const series of [
    'password_hashes{state="running"}',
    'password_hashes{state="queued"}',
    'revocation_cache_sessions',
    'nodejs_eventloop_lag_seconds',
  ]) {
    assert.ok(after.includes(`${series} `), `${series} is missing`)
  }
  // Paths never become labels: no slug appears in the scrape.
  assert.ok(!after.includes(tenant.slug))
})

test('webhook deliveries by outcome, the queue depth and the age of its oldest due delivery', async (t) => {
  // On PostgreSQL the queue is every test's, and a worker claims every tenant's due
  // deliveries: the figures are at least this test's own (exact on a database of its own).
  const own = !process.env.DATABASE_URL
  const atLeast = (actual: number, expected: number, what: string) =>
    own
      ? assert.equal(actual, expected, what)
      : assert.ok(actual >= expected, `${what}: ${actual} < ${expected}`)
  const hooks = await startTestServer(t, {
    metricsToken: TOKEN,
    webhookAllowPrivate: true,
    webhookRetrySchedule: [1],
  })
  const tenant = await createTenant(hooks)
  const fine = await receiver(t)
  const failing = await receiver(t, (_n, res) => {
    res.statusCode = 503
    res.end()
  })
  await addHook(hooks, tenant, fine.url, ['UserSignup'])
  await addHook(hooks, tenant, failing.url, ['UserSignup'])
  await signup(hooks, tenant.slug)
  hooks.clock.advance(120)
  const queued = await scrape(hooks)
  atLeast(value(queued, 'webhook_queue_deliveries{state="pending"}'), 2, 'pending')
  atLeast(value(queued, 'webhook_queue_deliveries{state="due"}'), 2, 'due')
  const age = value(queued, 'webhook_queue_oldest_due_seconds')
  assert.ok(age >= 120 && (!own || age === 120), `oldest due ${age} s`)

  const worker = new WebhookWorker(hooks.deps, { tenants: [tenant.tenantId] })
  await worker.runOnce() // one succeeds, one will be retried in 1 s
  hooks.clock.advance(1)
  await worker.runOnce() // the retry fails for good
  assert.equal(fine.received.length, 1)
  assert.equal(failing.received.length, 2)
  const after = await scrape(hooks)
  atLeast(value(after, 'webhook_deliveries_total{outcome="succeeded"}'), 1, 'succeeded')
  atLeast(value(after, 'webhook_deliveries_total{outcome="retrying"}'), 1, 'retrying')
  atLeast(value(after, 'webhook_deliveries_total{outcome="failed"}'), 1, 'failed')
  if (own) {
    assert.equal(value(after, 'webhook_queue_deliveries{state="pending"}'), 0)
    assert.equal(value(after, 'webhook_queue_oldest_due_seconds'), 0)
    assert.equal(value(after, 'webhook_deliveries_total{outcome="released"}'), 0)
  }
})
