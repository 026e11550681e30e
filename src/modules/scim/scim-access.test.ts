// SCIM's door (CONTRACT §14): only an API key of the tenant opens it; everything under
// /scim/v2/ answers in SCIM's error schema (the 401s, the unknown tenant's 404, unknown
// routes, wrong methods, malformed bodies); the discovery endpoints say what is supported;
// each request counts against the key's ADMIN_REQUESTS budget.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { insertApiKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  expectScimError,
  GROUP_SCHEMA,
  LIST_SCHEMA,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../../../test/helpers.ts'

let server: TestServer
let t: ScimTenant
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await scimTenant(server)
})

const NEW_USER = (email: string) => ({ schemas: [USER_SCHEMA], userName: email, active: true })

test('SCIM refuses a request without a bearer, or with a user token, with 401 in the SCIM error schema', async () => {
  const member = await memberToken(server, t.slug)
  const admin = t.admin.accessToken as string
  await unchanged(server, t.tenantId, async () => {
    for (const token of [null, member, admin, 'not-a-key', `ak_live_${'x'.repeat(43)}`]) {
      expectScimError(await t.scim('GET', '/Users', undefined, { token }), 401)
      const post = await t.scim('POST', '/Users', NEW_USER('nope@example.com'), { token })
      expectScimError(post, 401)
    }
  })
})

test("SCIM refuses another tenant's API key (401) and an unknown tenant (404), both in the SCIM schema", async () => {
  const other = await scimTenant(server)
  const res = await t.scim('GET', '/Users', undefined, { token: other.key })
  expectScimError(res, 401)
  const unknown = await server.request('GET', '/scim/v2/no-such-tenant-here/Users', undefined, {
    token: t.key,
  })
  expectScimError(unknown, 404)
  const malformed = await server.request('GET', '/scim/v2/NOT_A_SLUG/Users', undefined, {
    token: t.key,
  })
  expectScimError(malformed, 404)
  const long = await server.request('GET', `/scim/v2/${'a'.repeat(120)}/Users`, undefined, {
    token: t.key,
  })
  expectScimError(long, 404)
})

test('SCIM answers unknown routes 404 and wrong methods 405 in its error schema', async () => {
  expectScimError(await t.scim('GET', '/Devices'), 404)
  expectScimError(await t.scim('GET', '/Users/x/y'), 404)
  const wrong = await t.scim('DELETE', '/Users')
  expectScimError(wrong, 405)
  assert.match(wrong.headers.get('allow') ?? '', /GET/)
})

test('SCIM reads application/scim+json and application/json bodies; malformed JSON is 400 invalidSyntax', async () => {
  const scimJson = await t.scim('POST', '/Users', NEW_USER('ct-scim@example.com'))
  assert.equal(scimJson.status, 201, JSON.stringify(scimJson.body))
  const plain = await t.scim('POST', '/Users', NEW_USER('ct-json@example.com'), {
    headers: { 'content-type': 'application/json' },
  })
  assert.equal(plain.status, 201, JSON.stringify(plain.body))
  await unchanged(server, t.tenantId, async () => {
    expectScimError(
      await t.scim('POST', '/Users', undefined, { raw: '{"userName":' }),
      400,
      'invalidSyntax',
    )
    const text = await t.scim('POST', '/Users', undefined, {
      raw: 'userName=a@example.com',
      headers: { 'content-type': 'text/plain' },
    })
    expectScimError(text, 400, 'invalidSyntax')
    const nul = await t.scim('POST', '/Users', NEW_USER('nul\u0000@example.com'))
    expectScimError(nul, 400, 'invalidValue')
  })
})

test('ServiceProviderConfig: patch, filter (maxResults 200) and etag supported; sort, bulk, changePassword not', async () => {
  const res = await t.scim('GET', '/ServiceProviderConfig')
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^application\/scim\+json/)
  assert.deepEqual(res.body.schemas, [
    'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  ])
  assert.equal(res.body.patch.supported, true)
  assert.deepEqual(res.body.filter, { supported: true, maxResults: 200 })
  assert.equal(res.body.etag.supported, true)
  assert.equal(res.body.sort.supported, false)
  assert.equal(res.body.bulk.supported, false)
  assert.equal(res.body.changePassword.supported, false)
  assert.equal(res.body.authenticationSchemes[0].type, 'oauthbearertoken')
})

test('ResourceTypes and Schemas describe the User and Group resources and their attributes', async () => {
  const types = await t.scim('GET', '/ResourceTypes')
  assert.equal(types.status, 200)
  assert.deepEqual(types.body.schemas, [LIST_SCHEMA])
  assert.equal(types.body.totalResults, 2)
  const [user, group] = types.body.Resources
  assert.deepEqual([user.id, user.endpoint, user.schema], ['User', '/Users', USER_SCHEMA])
  // CONTRACT §17: Groups are listed beside Users.
  assert.deepEqual([group.id, group.endpoint, group.schema], ['Group', '/Groups', GROUP_SCHEMA])
  assert.equal((await t.scim('GET', '/ResourceTypes/User')).body.id, 'User')
  assert.equal((await t.scim('GET', '/ResourceTypes/Group')).body.id, 'Group')
  expectScimError(await t.scim('GET', '/ResourceTypes/Device'), 404)

  const schemas = await t.scim('GET', '/Schemas')
  assert.equal(schemas.status, 200)
  const [schema, groupSchema] = schemas.body.Resources
  assert.equal(schema.id, USER_SCHEMA)
  assert.equal(groupSchema.id, GROUP_SCHEMA)
  assert.deepEqual(
    groupSchema.attributes.map((a: { name: string }) => a.name),
    ['displayName', 'externalId', 'members'],
  )
  assert.equal((await t.scim('GET', `/Schemas/${GROUP_SCHEMA}`)).body.id, GROUP_SCHEMA)
  const names = schema.attributes.map((a: { name: string }) => a.name)
  for (const name of [
    'userName',
    'name',
    'displayName',
    'externalId',
    'emails',
    'active',
    'password',
  ]) {
    assert.ok(names.includes(name), name)
  }
  const password = schema.attributes.find((a: { name: string }) => a.name === 'password')
  assert.equal(password.returned, 'never')
  assert.equal((await t.scim('GET', `/Schemas/${USER_SCHEMA}`)).body.id, USER_SCHEMA)
  expectScimError(await t.scim('GET', '/Schemas/urn:nope'), 404)
})

test('SCIM requests count against ADMIN_REQUESTS: past the budget 429 with Retry-After, in the SCIM schema', async (ctx) => {
  const limited = await startTestServer(ctx, {
    limits: { ...GENEROUS_LIMITS, adminRequests: { points: 3, seconds: 60 } },
  })
  const lt = await scimTenant(limited)
  for (let i = 0; i < 3; i++) assert.equal((await lt.scim('GET', '/Users')).status, 200)
  const over = await lt.scim('GET', '/Users')
  expectScimError(over, 429)
  assert.ok(Number(over.headers.get('retry-after')) > 0)
  // A second key has its own budget, as on the admin routes.
  const second = await insertApiKey(limited, lt.tenantId)
  assert.equal((await lt.scim('GET', '/Users', undefined, { token: second })).status, 200)
})
