// API resources of the OpenID provider (CONTRACT §11): an absolute URI unique in the
// tenant (409 identifier_taken), scopes with the roles that may be granted them, a token
// lifetime of 60..86400 s; admin rules; another tenant's resource 404.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { actionsSince, auditMark, tenantSnapshot, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
let admin: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
})

let n = 0
const identifier = () => `https://api.example.com/r${++n}-${crypto.randomUUID()}`
const create = (body: unknown, token = admin, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/api-resources`, body, { token })

test('api resources: created with defaults (roles Member and Admin, 900 s), read, listed, audited', async () => {
  const mark = await auditMark(server, t.tenantId)
  const id = identifier()
  const res = await create({
    name: 'Reports',
    identifier: id,
    scopes: [
      { name: 'reports:read', description: 'Read' },
      { name: 'reports:admin', roles: ['Admin'] },
    ],
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const { apiResource } = res.body
  assert.deepEqual(Object.keys(res.body), ['apiResource'])
  assert.equal(apiResource.identifier, id)
  assert.equal(apiResource.accessTokenTtlSeconds, 900)
  assert.deepEqual(apiResource.scopes, [
    { name: 'reports:read', description: 'Read', roles: ['Member', 'Admin'] },
    { name: 'reports:admin', description: null, roles: ['Admin'] },
  ])
  assert.deepEqual(await actionsSince(server, t.tenantId, mark), ['ApiResourceCreated'])
  const got = await server.request(
    'GET',
    `/v1/${t.slug}/api-resources/${apiResource.id}`,
    undefined,
    {
      token: admin,
    },
  )
  assert.deepEqual(got.body, { apiResource })
  const list = await server.request('GET', `/v1/${t.slug}/api-resources?limit=200`, undefined, {
    token: admin,
  })
  assert.equal(list.status, 200)
  assert.ok(list.body.items.some((r: { id: string }) => r.id === apiResource.id))
  assert.ok('nextCursor' in list.body)
})

test('api resources: a duplicate identifier in the tenant is 409 identifier_taken and changes nothing; another tenant may use it', async () => {
  const id = identifier()
  assert.equal((await create({ name: 'A', identifier: id, scopes: [] })).status, 200)
  const dup = await unchanged(server, t.tenantId, () =>
    create({ name: 'B', identifier: id, scopes: [] }),
  )
  expectError(dup, 409, 'identifier_taken')
  const other = await createTenant(server)
  const theirs = await create(
    { name: 'A', identifier: id, scopes: [] },
    other.admin.accessToken,
    other.slug,
  )
  assert.equal(theirs.status, 200)
  // Renaming another resource to a taken identifier: 409 as well.
  const second = (await create({ name: 'C', identifier: identifier(), scopes: [] })).body
    .apiResource
  const renamed = await unchanged(server, t.tenantId, () =>
    server.request(
      'PATCH',
      `/v1/${t.slug}/api-resources/${second.id}`,
      { identifier: id },
      { token: admin },
    ),
  )
  expectError(renamed, 409, 'identifier_taken')
})

test('api resources: bad input is 400 validation and changes nothing', async () => {
  const bad: [unknown, string | undefined][] = [
    [{ name: 'A', identifier: 'not a uri', scopes: [] }, 'body.identifier'],
    [{ name: 'A', identifier: 'https://api.example.com/#frag', scopes: [] }, 'body.identifier'],
    [{ name: 'A', identifier: identifier(), scopes: [], accessTokenTtlSeconds: 59 }, undefined],
    [{ name: 'A', identifier: identifier(), scopes: [], accessTokenTtlSeconds: 86401 }, undefined],
    [{ name: 'A', identifier: identifier(), scopes: [], accessTokenTtlSeconds: '900' }, undefined],
    [{ name: 'A', identifier: identifier(), scopes: [{ name: 'a b' }] }, undefined],
    [{ name: 'A', identifier: identifier(), scopes: [{ name: 'x', roles: ['Owner'] }] }, undefined],
    [
      { name: 'A', identifier: identifier(), scopes: [{ name: 'x' }, { name: 'x' }] },
      'body.scopes.1.name',
    ],
    [{ name: 'A', identifier: identifier() }, undefined],
    [{ identifier: identifier(), scopes: [] }, undefined],
  ]
  for (const [body, path] of bad) {
    expectValidation(await unchanged(server, t.tenantId, () => create(body)), path)
  }
})

test('api resources: PATCH replaces the named fields and audits them; DELETE answers ok, then 404', async () => {
  const made = (await create({ name: 'P', identifier: identifier(), scopes: [{ name: 'a' }] })).body
    .apiResource
  const mark = await auditMark(server, t.tenantId)
  const patched = await server.request(
    'PATCH',
    `/v1/${t.slug}/api-resources/${made.id}`,
    { accessTokenTtlSeconds: 3600, scopes: [{ name: 'b', roles: ['Admin'] }] },
    { token: admin },
  )
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  assert.equal(patched.body.apiResource.accessTokenTtlSeconds, 3600)
  assert.deepEqual(patched.body.apiResource.scopes, [
    { name: 'b', description: null, roles: ['Admin'] },
  ])
  const deleted = await server.request(
    'DELETE',
    `/v1/${t.slug}/api-resources/${made.id}`,
    undefined,
    {
      token: admin,
    },
  )
  assert.deepEqual(deleted.body, { ok: true })
  assert.deepEqual(await actionsSince(server, t.tenantId, mark), [
    'ApiResourceDeleted',
    'ApiResourceUpdated',
  ])
  expectError(
    await server.request('GET', `/v1/${t.slug}/api-resources/${made.id}`, undefined, {
      token: admin,
    }),
    404,
    'not_found',
  )
})

test('api resources isolation: another tenant’s resource is 404 on every route, and untouched', async () => {
  const other = await createTenant(server)
  const theirs = (
    await create(
      { name: 'T', identifier: identifier(), scopes: [] },
      other.admin.accessToken,
      other.slug,
    )
  ).body.apiResource
  const before = await tenantSnapshot(server, other.tenantId)
  const path = `/v1/${t.slug}/api-resources/${theirs.id}`
  for (const [method, body] of [
    ['GET', undefined],
    ['PATCH', { name: 'mine' }],
    ['DELETE', undefined],
  ] as const) {
    const res = await unchanged(server, t.tenantId, () =>
      server.request(method, path, body, { token: admin }),
    )
    expectError(res, 404, 'not_found')
  }
  assert.deepEqual(await tenantSnapshot(server, other.tenantId), before)
})

test('api resources admin rules: a Member is 403 admin_required; an API key may manage them', async () => {
  const member = await memberToken(server, t.slug)
  const refused = await unchanged(server, t.tenantId, () =>
    create({ name: 'M', identifier: identifier(), scopes: [] }, member),
  )
  expectError(refused, 403, 'admin_required')
  const key = await insertApiKey(server, t.tenantId)
  const made = await create({ name: 'K', identifier: identifier(), scopes: [] }, key)
  assert.equal(made.status, 200, JSON.stringify(made.body))
})
