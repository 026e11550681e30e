// What a tenant admin learns from the egress rule (CONTRACT §13, issue 36): a refused
// delivery says only that the address was refused, never which address a name resolved to
// (P6); the IPv6 spellings of internal IPv4 addresses (IPv4-compatible ::7f00:1, SIIT
// ::ffff:0:7f00:1) and site-local fec0::/10 are refused like the others; a failed attempt
// is told by a fixed phrase, never the network library's message, which names addresses,
// ports and certificate names; and a URL's query and userinfo, where receivers take
// credentials, are masked in the audit log.
import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { freePort } from '../../../test/fixtures/ports.ts'
import { mismatchedTlsReceiver } from '../../../test/fixtures/tls.ts'
import { addHook, deliveries, receiver } from '../../../test/fixtures/webhooks.ts'
import { createTenant, signup, startTestServer } from '../../../test/helpers.ts'
import { EGRESS_FAILURES } from '../../lib/egress-failure.ts'
import { WebhookWorker } from './worker.ts'

async function setup(t: TestContext) {
  const server = await startTestServer(t, { webhookAllowPrivate: false, webhookRetrySchedule: [1] })
  const tenant = await createTenant(server)
  const worker = new WebhookWorker(server.deps, { tenants: [tenant.tenantId] })
  return { server, tenant, worker }
}

test('egress: deliveries to loopback by name, IPv4-compatible, SIIT and site-local IPv6 literals are refused, and the error names no address', async (t) => {
  const { server, tenant, worker } = await setup(t)
  const sink = await receiver(t)
  const port = new URL(sink.url).port
  const urls = [
    `https://localhost:${port}/hook`,
    `https://[::7f00:1]:${port}/hook`,
    `https://[::ffff:0:7f00:1]:${port}/hook`,
    `https://[fec0::1]:${port}/hook`,
    `https://127.0.0.1:${port}/hook`,
  ]
  const hooks = []
  for (const url of urls) hooks.push(await addHook(server, tenant, url, ['UserSignup']))
  await signup(server, tenant.slug)
  await worker.runOnce()
  assert.equal(sink.received.length, 0)
  for (const [i, hook] of hooks.entries()) {
    const [row] = await deliveries(server, tenant, hook.webhook.id)
    assert.equal(row.status, 'Pending', urls[i])
    assert.equal(row.lastResponseStatus, null, urls[i])
    assert.equal(
      row.lastError,
      'refused: the address is a loopback, private, link-local or unspecified address',
      urls[i],
    )
  }
})

test('rule: a failed delivery names no address, port or certificate name (a closed port, a name that does not resolve, a certificate for other hosts); the error itself goes to the server log', async (t) => {
  const server = await startTestServer(t, { webhookAllowPrivate: true, webhookRetrySchedule: [1] })
  const tenant = await createTenant(server)
  const worker = new WebhookWorker(server.deps, { tenants: [tenant.tenantId] })
  const thrown: { error: unknown; webhookId: string }[] = []
  worker.onAttemptError = (error, at) => thrown.push({ error, webhookId: at.webhookId })
  const closed = await freePort()
  const tls = await mismatchedTlsReceiver(t, ['DNS:internal.corp', 'IP:10.1.2.3'])
  const cases = [
    {
      url: `http://127.0.0.1:${closed}/hook`,
      error: EGRESS_FAILURES.connection,
      raw: /ECONNREFUSED/,
      secrets: ['127.0.0.1', String(closed), 'ECONNREFUSED'],
    },
    {
      url: 'http://db.internal-corp.invalid:5432/hook',
      error: EGRESS_FAILURES.unresolved,
      raw: /ENOTFOUND|EAI_AGAIN/,
      secrets: ['internal-corp', '5432', 'ENOTFOUND'],
    },
    {
      url: tls.url,
      error: EGRESS_FAILURES.tls,
      raw: /internal\.corp/,
      secrets: ['internal.corp', '10.1.2.3', 'localhost', String(tls.port), 'altnames'],
    },
  ]
  const hooks = []
  for (const c of cases) hooks.push(await addHook(server, tenant, c.url, ['UserSignup']))
  await signup(server, tenant.slug)
  await worker.runOnce()
  assert.equal(tls.received, 0)
  for (const [i, hook] of hooks.entries()) {
    const c = cases[i] as (typeof cases)[number]
    const listed = await deliveries(server, tenant, hook.webhook.id)
    assert.deepEqual(
      listed.map((row) => [row.status, row.lastResponseStatus, row.lastError]),
      [['Pending', null, c.error]],
      c.url,
    )
    for (const secret of c.secrets) {
      assert.equal(JSON.stringify(listed).includes(secret), false, `${secret} is not shown`)
    }
    const logged = thrown.find((x) => x.webhookId === hook.webhook.id)
    assert.match(String(logged?.error), c.raw, 'the server log has the error as thrown')
  }
})

test('egress: the audit log keeps a webhook URL with its query values and userinfo masked; the endpoint keeps it whole', async (t) => {
  const { server, tenant } = await setup(t)
  const url = 'https://hooks.example.com/in/abc?token=s3cret-value&region=eu'
  const hook = await addHook(server, tenant, url, ['UserSignup'])
  const got = await server.request(
    'GET',
    `/v1/${tenant.slug}/webhooks/${hook.webhook.id}`,
    undefined,
    {
      token: tenant.admin.accessToken,
    },
  )
  assert.equal(got.body.webhook.url, url)
  const deleted = await server.request(
    'DELETE',
    `/v1/${tenant.slug}/webhooks/${hook.webhook.id}`,
    undefined,
    { token: tenant.admin.accessToken },
  )
  assert.equal(deleted.status, 200)
  const audit = await server.request('GET', `/v1/${tenant.slug}/audit?limit=200`, undefined, {
    token: tenant.admin.accessToken,
  })
  assert.equal(audit.status, 200, JSON.stringify(audit.body))
  const events = (audit.body.items as { action: string; metadata: { url?: string } }[]).filter(
    (e) => e.action === 'WebhookCreated' || e.action === 'WebhookDeleted',
  )
  assert.equal(events.length, 2)
  for (const e of events) {
    assert.equal(e.metadata.url, 'https://hooks.example.com/in/abc?token=***&region=***')
  }
  assert.ok(!JSON.stringify(audit.body).includes('s3cret'), 'the credential is nowhere in the log')
})
