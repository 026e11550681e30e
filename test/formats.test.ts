// Values that pass a loose format check but that PostgreSQL or JavaScript cannot hold are
// refused at validation (400), never a 500 further in.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { createTenant, startTestServer, type TenantFixture, type TestServer } from './helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const asAdmin = (method: string, path: string, body?: unknown) =>
  server.request(method, `/v1/${t.slug}${path}`, body, { token: t.admin.accessToken })

function assertValidation(res: { status: number; body: any }) {
  assert.equal(res.status, 400, JSON.stringify(res.body))
  assert.equal(res.body.code, 'BAD_REQUEST')
  assert.equal(res.body.details.reason, 'validation')
}

test('rule: a urn:uuid: id is a 400, not a database error', async () => {
  const id = t.admin.user.id
  assertValidation(await asAdmin('DELETE', `/users/urn:uuid:${id}`))
  assertValidation(await asAdmin('PATCH', `/users/urn:uuid:${id}`, { status: 'Suspended' }))
  assertValidation(await asAdmin('GET', `/audit?userId=urn:uuid:${id}`))
  const me = await asAdmin('GET', '/me')
  assert.equal(me.body.status, 'Active')
})

test('rule: a leap-second date-time is a 400, not an Invalid Date', async () => {
  assertValidation(await asAdmin('GET', '/audit?before=2016-12-31T23:59:60Z'))
  assertValidation(
    await asAdmin('POST', '/api-keys', {
      name: 'leap',
      environment: 'test',
      expiresAt: '2999-12-31T23:59:60Z',
    }),
  )
  const keys = await asAdmin('GET', '/api-keys')
  assert.deepEqual(keys.body.items, [])
})

test('ordinary uuids and date-times still pass', async () => {
  const res = await asAdmin('GET', `/audit?userId=${t.admin.user.id}&before=2999-01-01T00:00:00Z`)
  assert.equal(res.status, 200)
  assert.ok(res.body.items.length > 0)
})
