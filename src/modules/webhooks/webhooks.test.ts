// Webhook endpoints (CONTRACT §13): created with a secret shown once and sealed at rest,
// listed, read, changed, rotated and deleted by an Admin; every bad input refused with its
// documented error and nothing changed; another tenant's webhook is 404; a Member 403.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { actionsSince, auditMark, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { webhooks } from '../../db/schema.ts'
import { FieldCipher } from '../../lib/crypto.ts'
import { rotateColumn } from '../../lib/rotation.ts'
import { openSecret, webhookSecretColumns } from './secret.ts'

let server: TestServer
let t: TenantFixture
let admin: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
})

const base = (slug = t.slug) => `/v1/${slug}/webhooks`
const call = (method: string, path: string, body?: unknown, token = admin) =>
  server.request(method, path, body, { token })
const create = (body: unknown, token = admin) => call('POST', base(), body, token)

async function storedRow(tenantId: string, id: string) {
  const rows = await server.deps.db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)))
  return rows[0]
}

function secretBytes(secret: string): number {
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/)
  return Buffer.from(secret.slice(6), 'base64').length
}

test('webhooks: created with a whsec_ secret shown once and sealed; read, listed, patched, deleted, each audited', async () => {
  const mark = await auditMark(server, t.tenantId)
  const res = await create({
    url: 'https://hooks.example.com/in',
    events: ['UserSignup', 'UserLogin'],
    description: 'CRM sync',
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const { webhook, secret } = res.body
  assert.deepEqual(Object.keys(res.body).sort(), ['secret', 'webhook'])
  const bytes = secretBytes(secret)
  assert.ok(bytes >= 24 && bytes <= 64, `${bytes} random bytes`)
  assert.equal(webhook.enabled, true)
  assert.deepEqual(webhook.events, ['UserSignup', 'UserLogin'])
  assert.equal(webhook.failingSince, null)
  const row = await storedRow(t.tenantId, webhook.id)
  assert.ok(!row.secretEnc.includes(secret.slice(6)), 'never in plaintext')
  assert.equal(
    openSecret(server.deps.cipher, t.tenantId, webhook.id, 'current', row.secretEnc),
    secret,
  )

  const got = await call('GET', `${base()}/${webhook.id}`)
  assert.equal(got.status, 200)
  assert.deepEqual(got.body, { webhook })
  assert.ok(!JSON.stringify(got.body).includes(secret))

  const patched = await call('PATCH', `${base()}/${webhook.id}`, {
    events: ['*'],
    enabled: false,
    description: null,
  })
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  assert.deepEqual(patched.body.webhook.events, ['*'])
  assert.equal(patched.body.webhook.enabled, false)
  assert.equal(patched.body.webhook.description, null)

  const rotated = await call('POST', `${base()}/${webhook.id}/secret`)
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body))
  assert.notEqual(rotated.body.secret, secret)
  secretBytes(rotated.body.secret)
  const after = await storedRow(t.tenantId, webhook.id)
  const cipher = server.deps.cipher
  assert.equal(
    openSecret(cipher, t.tenantId, webhook.id, 'current', after.secretEnc),
    rotated.body.secret,
  )
  assert.equal(
    openSecret(cipher, t.tenantId, webhook.id, 'previous', after.previousSecretEnc ?? ''),
    secret,
  )
  assert.equal(after.previousUntil?.getTime(), server.clock.now().getTime() + 24 * 3600 * 1000)

  const deleted = await call('DELETE', `${base()}/${webhook.id}`)
  assert.equal(deleted.status, 200)
  assert.deepEqual(deleted.body, { ok: true })
  expectError(await call('GET', `${base()}/${webhook.id}`), 404, 'not_found')
  assert.deepEqual((await actionsSince(server, t.tenantId, mark)).sort(), [
    'WebhookCreated',
    'WebhookDeleted',
    'WebhookSecretRotated',
    'WebhookUpdated',
  ])
})

test('webhooks: the list is paged oldest first', async () => {
  const tenant = await createTenant(server)
  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    server.clock.advance(1000)
    const res = await call(
      'POST',
      base(tenant.slug),
      { url: `https://hooks.example.com/${i}`, events: ['*'] },
      tenant.admin.accessToken,
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    ids.push(res.body.webhook.id)
  }
  const first = await call(
    'GET',
    `${base(tenant.slug)}?limit=2`,
    undefined,
    tenant.admin.accessToken,
  )
  assert.equal(first.status, 200)
  assert.deepEqual(
    first.body.items.map((w: { id: string }) => w.id),
    ids.slice(0, 2),
  )
  assert.ok(first.body.nextCursor)
  const second = await call(
    'GET',
    `${base(tenant.slug)}?limit=2&cursor=${first.body.nextCursor}`,
    undefined,
    tenant.admin.accessToken,
  )
  assert.deepEqual(
    second.body.items.map((w: { id: string }) => w.id),
    ids.slice(2),
  )
  assert.equal(second.body.nextCursor, null)
})

test('webhooks: bad events, urls and bodies are 400 validation and change nothing', async () => {
  const created = await create({ url: 'https://hooks.example.com/keep', events: ['UserSignup'] })
  const id = created.body.webhook.id
  const bad: [unknown, string][] = [
    [{ url: 'https://h.example.com/', events: [] }, 'body.events'],
    [{ url: 'https://h.example.com/', events: ['*', 'UserSignup'] }, 'body.events'],
    [{ url: 'https://h.example.com/', events: ['usersignup'] }, 'body.events'],
    [{ url: 'https://h.example.com/', events: ['WebhookTest'] }, 'body.events'],
    [{ url: 'https://h.example.com/', events: ['NoSuchAction'] }, 'body.events'],
    [{ url: 'https://h.example.com/', events: 'UserSignup' }, 'body.events'],
    [{ url: 'http://h.example.com/', events: ['*'] }, 'body.url'],
    [{ url: '/relative', events: ['*'] }, 'body.url'],
    [{ url: 'ftp://h.example.com/', events: ['*'] }, 'body.url'],
    [{ url: 'https://u:p@h.example.com/', events: ['*'] }, 'body.url'],
    [{ url: 'https://h.example.com/#x', events: ['*'] }, 'body.url'],
    [{ events: ['*'] }, 'body.url'],
  ]
  await unchanged(server, t.tenantId, async () => {
    for (const [body, path] of bad) {
      const res = await create(body)
      try {
        expectValidation(res)
      } catch (error) {
        assert.fail(`${JSON.stringify(body)} (${path}): ${(error as Error).message}`)
      }
      if (path === 'body.url' && (body as { url?: string }).url === undefined) continue
      const patched = await call('PATCH', `${base()}/${id}`, body)
      assert.equal(patched.status, 400, `PATCH ${JSON.stringify(body)}`)
    }
  })
  const got = await call('GET', `${base()}/${id}`)
  assert.deepEqual(got.body.webhook.events, ['UserSignup'])
})

test("webhooks: another tenant's webhook is 404, a Member is 403, and nothing changes", async () => {
  const created = await create({ url: 'https://hooks.example.com/mine', events: ['*'] })
  const id = created.body.webhook.id
  const other = await createTenant(server)
  const theirs = other.admin.accessToken
  const member = await memberToken(server, t.slug)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    for (const [method, path, body] of [
      ['GET', `${base(other.slug)}/${id}`, undefined],
      ['PATCH', `${base(other.slug)}/${id}`, { enabled: false }],
      ['DELETE', `${base(other.slug)}/${id}`, undefined],
      ['POST', `${base(other.slug)}/${id}/secret`, undefined],
      ['POST', `${base(other.slug)}/${id}/test`, undefined],
      ['GET', `${base(other.slug)}/${id}/deliveries`, undefined],
      ['POST', `${base(other.slug)}/${id}/deliveries/${id}/retry`, undefined],
      ['GET', `${base(other.slug)}/not-a-uuid`, undefined],
    ] as const) {
      expectError(await call(method, path, body, theirs), 404, 'not_found')
    }
    expectError(await call('GET', base(), undefined, member), 403, 'admin_required')
    expectError(
      await call('POST', base(), { url: 'https://a.example.com/', events: ['*'] }, member),
      403,
      'admin_required',
    )
    expectError(
      await call('POST', `${base()}/${id}/secret`, undefined, member),
      403,
      'admin_required',
    )
  })
})

test('webhooks: a test event is queued for that endpoint only, listed in its deliveries, not audited; a retry keeps its id', async () => {
  const one = await create({ url: 'https://hooks.example.com/one', events: ['UserLogin'] })
  const two = await create({ url: 'https://hooks.example.com/two', events: ['*'] })
  const mark = await auditMark(server, t.tenantId)
  const sent = await call('POST', `${base()}/${one.body.webhook.id}/test`)
  assert.equal(sent.status, 200, JSON.stringify(sent.body))
  const { delivery } = sent.body
  assert.equal(delivery.eventType, 'WebhookTest')
  assert.equal(delivery.status, 'Pending')
  assert.equal(delivery.attempts, 0)
  assert.deepEqual(await actionsSince(server, t.tenantId, mark), [])
  const listed = await call('GET', `${base()}/${one.body.webhook.id}/deliveries`)
  assert.equal(listed.status, 200)
  assert.deepEqual(listed.body, { items: [delivery], nextCursor: null })
  const others = await call('GET', `${base()}/${two.body.webhook.id}/deliveries`)
  assert.deepEqual(
    others.body.items.filter((d: { eventType: string }) => d.eventType === 'WebhookTest'),
    [],
  )

  const retried = await call(
    'POST',
    `${base()}/${one.body.webhook.id}/deliveries/${delivery.id}/retry`,
  )
  assert.equal(retried.status, 200, JSON.stringify(retried.body))
  assert.equal(retried.body.delivery.id, delivery.id)
  expectError(
    await call('POST', `${base()}/${two.body.webhook.id}/deliveries/${delivery.id}/retry`),
    404,
    'not_found',
  )
})

test('npm run rotate-keys re-seals both webhook secrets under the first ENCRYPTION_KEYS entry; they stay the same', async () => {
  const tenant = await createTenant(server)
  const token = tenant.admin.accessToken
  const made = await call(
    'POST',
    base(tenant.slug),
    { url: 'https://h.example.com/', events: ['*'] },
    token,
  )
  const id = made.body.webhook.id
  const fresh = (await call('POST', `${base(tenant.slug)}/${id}/secret`, undefined, token)).body
    .secret
  const [v1] = server.deps.config.encryptionKeys
  const rotated = new FieldCipher([{ version: 'v2', key: Buffer.alloc(32, 42) }, v1])
  for (const slot of ['current', 'previous'] as const) {
    // This tenant's rows only: the scan walks (tenant_id, id) order from the tenant on.
    const column = webhookSecretColumns[slot].rotation(server.deps.db, rotated)
    const start = {
      tenantId: tenant.tenantId,
      id: '00000000-0000-0000-0000-000000000000',
      sealed: '',
    }
    const own: typeof column = {
      ...column,
      scan: async (after, limit) =>
        (await column.scan(after ?? start, limit)).filter((r) => r.tenantId === tenant.tenantId),
    }
    const report = await rotateColumn(rotated, own)
    assert.equal(report.rotated, 1, JSON.stringify(report))
    assert.deepEqual(report.unreadable, [])
  }
  const row = await storedRow(tenant.tenantId, id)
  assert.equal(rotated.versionOf(row.secretEnc), 'v2')
  assert.equal(rotated.versionOf(row.previousSecretEnc ?? ''), 'v2')
  assert.equal(openSecret(rotated, tenant.tenantId, id, 'current', row.secretEnc), fresh)
  assert.equal(
    openSecret(rotated, tenant.tenantId, id, 'previous', row.previousSecretEnc ?? ''),
    made.body.secret,
  )
  // Bound to its slot: the current sealed value does not open as the previous one.
  assert.equal(openSecret(rotated, tenant.tenantId, id, 'previous', row.secretEnc), undefined)
})
