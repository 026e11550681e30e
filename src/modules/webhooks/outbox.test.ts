// The webhook outbox (CONTRACT §13, Durable): an audit write queues one delivery per
// subscribed, enabled endpoint of its tenant, in the audit write's own transaction.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { asc, eq } from '../../db/orm.ts'
import { webhookDeliveries } from '../../db/schema.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { SYSTEM_ACTOR } from '../audit/recorder.ts'
import { insertWebhook } from './queries.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

async function addWebhook(tenantId: string, events: string[], enabled = true) {
  const now = server.clock.now()
  return insertWebhook(server.deps.db, {
    tenantId,
    id: uuidv7(now.getTime()),
    url: 'https://hooks.example.com/in',
    events,
    enabled,
    secretEnc: 'sealed',
    createdAt: now,
    updatedAt: now,
  })
}

function deliveriesOf(tenantId: string) {
  return server.deps.db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.tenantId, tenantId))
    .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
}

test('outbox: a signup queues a UserSignup delivery for each subscribed enabled endpoint only', async () => {
  const tenant = await createTenant(server)
  const all = await addWebhook(tenant.tenantId, ['*'])
  const signups = await addWebhook(tenant.tenantId, ['UserSignup', 'UserLogin'])
  await addWebhook(tenant.tenantId, ['ApiKeyCreated'])
  await addWebhook(tenant.tenantId, ['*'], false)
  const other = await createTenant(server)
  const user = await signup(server, tenant.slug)
  const rows = (await deliveriesOf(tenant.tenantId)).filter((r) => r.eventType === 'UserSignup')
  assert.deepEqual(rows.map((r) => r.webhookId).sort(), [all.id, signups.id].sort())
  for (const row of rows) {
    assert.equal(row.status, 'Pending')
    assert.equal(row.attempts, 0)
    assert.ok(row.nextAttemptAt)
    const body = row.payload as any
    assert.equal(body.type, 'UserSignup')
    assert.equal(body.data.tenantId, tenant.tenantId)
    assert.equal(body.data.event.id, row.eventId)
    assert.equal(body.data.event.action, 'UserSignup')
    assert.equal(body.data.event.userId, user.user.id)
    assert.equal(body.timestamp, body.data.event.createdAt)
  }
  assert.equal(new Set(rows.map((r) => r.id)).size, 2)
  assert.deepEqual(await deliveriesOf(other.tenantId), [])
})

test('outbox: a tenant without webhooks queues nothing', async () => {
  await signup(server, t.slug)
  assert.deepEqual(await deliveriesOf(t.tenantId), [])
})

test('outbox: an audit write that rolls back leaves no delivery', async () => {
  const tenant = await createTenant(server)
  await addWebhook(tenant.tenantId, ['*'])
  await assert.rejects(
    server.deps.db.transaction(async (tx) => {
      await server.deps.audit.record(tx, tenant.tenantId, SYSTEM_ACTOR, [{ action: 'UserUpdated' }])
      throw new Error('roll back')
    }),
    /roll back/,
  )
  assert.deepEqual(await deliveriesOf(tenant.tenantId), [])
  await server.deps.db.transaction(async (tx) => {
    await server.deps.audit.record(tx, tenant.tenantId, SYSTEM_ACTOR, [
      { action: 'UserUpdated' },
      { action: 'ApiKeyCreated' },
    ])
  })
  const rows = await deliveriesOf(tenant.tenantId)
  assert.deepEqual(rows.map((r) => r.eventType).sort(), ['ApiKeyCreated', 'UserUpdated'])
})
