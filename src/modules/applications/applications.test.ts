// Applications of the OpenID provider (CONTRACT §11): created, read, listed, changed,
// rotated and deleted by an Admin or an API key; every bad input refused with its
// documented error and nothing changed; another tenant's application is 404; a Member 403.
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
import { and, eq } from '../../db/orm.ts'
import { applications } from '../../db/schema.ts'
import { FieldCipher } from '../../lib/crypto.ts'
import { rotateColumn } from '../../lib/rotation.ts'
import { clientSecretColumn, openSecret } from './secret.ts'

let server: TestServer
let t: TenantFixture
let admin: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
})

const create = (body: unknown, token = admin, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/applications`, body, { token })

async function storedRow(tenantId: string, id: string) {
  const rows = await server.deps.db
    .select()
    .from(applications)
    .where(and(eq(applications.tenantId, tenantId), eq(applications.id, id)))
  return rows[0]
}

test('applications: a web app gets its secret once, sealed at rest; GET never shows it', async () => {
  const mark = await auditMark(server, t.tenantId)
  const res = await create({
    name: 'Billing',
    type: 'web',
    redirectUris: ['https://billing.example.com/callback', 'http://localhost:3000/cb'],
    postLogoutRedirectUris: ['https://billing.example.com/'],
    backchannelLogoutUri: 'https://billing.example.com/backchannel',
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const { application, clientSecret } = res.body
  assert.equal(typeof clientSecret, 'string')
  assert.ok(clientSecret.length >= 43, '256 random bits')
  assert.deepEqual(Object.keys(res.body).sort(), ['application', 'clientSecret'])
  assert.equal(application.firstParty, true)
  assert.deepEqual(application.allowedScopes, [])
  assert.equal(application.type, 'web')
  assert.match(application.clientId, /^[A-Za-z0-9_-]{20,}$/)
  const row = await storedRow(t.tenantId, application.id)
  assert.ok(row.clientSecretEnc, 'sealed')
  assert.ok(!row.clientSecretEnc.includes(clientSecret), 'never in plaintext')
  assert.deepEqual(await actionsSince(server, t.tenantId, mark), ['ApplicationCreated'])

  const got = await server.request(
    'GET',
    `/v1/${t.slug}/applications/${application.id}`,
    undefined,
    {
      token: admin,
    },
  )
  assert.equal(got.status, 200)
  assert.deepEqual(got.body, { application })
  assert.ok(!JSON.stringify(got.body).includes(clientSecret))
})

test('applications: spa and native apps are public (no secret); native takes RFC 8252 redirect URIs', async () => {
  const spa = await create({ name: 'SPA', type: 'spa', redirectUris: ['https://app.example.com/'] })
  assert.equal(spa.status, 200, JSON.stringify(spa.body))
  assert.equal(spa.body.clientSecret, undefined)
  assert.equal((await storedRow(t.tenantId, spa.body.application.id)).clientSecretEnc, null)
  const native = await create({
    name: 'Mobile',
    type: 'native',
    redirectUris: [
      'com.example.mobile:/oauth2redirect',
      'http://127.0.0.1/callback',
      'http://[::1]:8080/cb',
    ],
  })
  assert.equal(native.status, 200, JSON.stringify(native.body))
  assert.equal(native.body.clientSecret, undefined)
  const rotate = await server.request(
    'POST',
    `/v1/${t.slug}/applications/${spa.body.application.id}/secret`,
    undefined,
    { token: admin },
  )
  expectValidation(rotate, 'params.id')
})

test('applications: redirect URI rules (absolute, no fragment, https or loopback http; private-use schemes only for native): 400 and nothing changed', async () => {
  const bad: [unknown, string][] = [
    [{ name: 'A', type: 'web', redirectUris: ['/callback'] }, 'body.redirectUris.0'],
    [
      { name: 'A', type: 'web', redirectUris: ['https://a.example.com/cb#x'] },
      'body.redirectUris.0',
    ],
    [{ name: 'A', type: 'web', redirectUris: ['http://a.example.com/cb'] }, 'body.redirectUris.0'],
    [
      { name: 'A', type: 'spa', redirectUris: ['https://ok.example.com', 'http://10.0.0.1/cb'] },
      'body.redirectUris.1',
    ],
    [{ name: 'A', type: 'web', redirectUris: ['com.example.app:/cb'] }, 'body.redirectUris.0'],
    [{ name: 'A', type: 'native', redirectUris: ['myapp:/cb'] }, 'body.redirectUris.0'],
    [{ name: 'A', type: 'native', redirectUris: ['javascript:alert(1)'] }, 'body.redirectUris.0'],
    [{ name: 'A', type: 'native', redirectUris: ['https://localhost/cb'] }, 'body.redirectUris.0'],
    [
      { name: 'A', type: 'web', postLogoutRedirectUris: ['http://evil.example/'] },
      'body.postLogoutRedirectUris.0',
    ],
    [
      { name: 'A', type: 'web', backchannelLogoutUri: 'http://evil.example/bc' },
      'body.backchannelLogoutUri',
    ],
    // The service calls the back-channel URI itself: never plain http, never its own network.
    ...[
      'http://127.0.0.1:6379/bc',
      'https://localhost/bc',
      'https://127.0.0.1/bc',
      'https://10.1.2.3/bc',
      'https://192.168.1.1/bc',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/bc',
      'https://[fd00::1]/bc',
      'https://[::ffff:127.0.0.1]/bc',
    ].map((uri): [unknown, string] => [
      { name: 'A', type: 'web', backchannelLogoutUri: uri },
      'body.backchannelLogoutUri',
    ]),
    [
      { name: 'A', type: 'machine', redirectUris: ['https://a.example.com/cb'] },
      'body.redirectUris',
    ],
    [
      { name: 'A', type: 'web', redirectUris: ['https://user:pw@a.example.com/cb'] },
      'body.redirectUris.0',
    ],
  ]
  for (const [body, path] of bad) {
    const res = await unchanged(server, t.tenantId, () => create(body))
    expectValidation(res, path)
  }
})

test('applications: malformed bodies are 400 validation and change nothing', async () => {
  const bad: unknown[] = [
    {},
    { name: '', type: 'web' },
    { name: 'A', type: 'desktop' },
    { name: 'A', type: 'web', redirectUris: 'https://a.example.com' },
    { name: 'A', type: 'web', firstParty: 'yes' },
    { name: 'A', type: 'machine', allowedScopes: ['has space'] },
    { name: 'A', type: 'machine', allowedScopes: ['x', 'x'] },
    { name: 7, type: 'web' },
  ]
  for (const body of bad) {
    expectValidation(await unchanged(server, t.tenantId, () => create(body)))
  }
})

test('applications: list pages oldest first; PATCH changes the named fields and audits them; the type stays', async () => {
  const own = await createTenant(server)
  const token = own.admin.accessToken
  const made: { id: string }[] = []
  for (const name of ['one', 'two', 'three']) {
    const res = await create({ name, type: 'machine', allowedScopes: ['a:read'] }, token, own.slug)
    made.push(res.body.application)
  }
  const first = await server.request('GET', `/v1/${own.slug}/applications?limit=2`, undefined, {
    token,
  })
  assert.equal(first.status, 200)
  assert.deepEqual(
    first.body.items.map((a: { name: string }) => a.name),
    ['one', 'two'],
  )
  assert.equal(typeof first.body.nextCursor, 'string')
  const second = await server.request(
    'GET',
    `/v1/${own.slug}/applications?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    undefined,
    { token },
  )
  assert.deepEqual(
    second.body.items.map((a: { name: string }) => a.name),
    ['three'],
  )
  assert.equal(second.body.nextCursor, null)

  const mark = await auditMark(server, own.tenantId)
  const patched = await server.request(
    'PATCH',
    `/v1/${own.slug}/applications/${made[0].id}`,
    { name: 'renamed', allowedScopes: ['a:read', 'a:write'], type: 'web' },
    { token },
  )
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  assert.equal(patched.body.application.name, 'renamed')
  assert.equal(patched.body.application.type, 'machine')
  assert.deepEqual(patched.body.application.allowedScopes, ['a:read', 'a:write'])
  const events = await actionsSince(server, own.tenantId, mark)
  assert.deepEqual(events, ['ApplicationUpdated'])
  // A machine app still takes no redirect URI on PATCH.
  const refused = await unchanged(server, own.tenantId, () =>
    server.request(
      'PATCH',
      `/v1/${own.slug}/applications/${made[0].id}`,
      { redirectUris: ['https://a.example.com/cb'] },
      { token },
    ),
  )
  expectValidation(refused, 'body.redirectUris')
})

test('applications: rotating the secret answers a new one once, audited; deleting answers ok and audits', async () => {
  const res = await create({ name: 'Job', type: 'machine' })
  const { application, clientSecret } = res.body
  const before = (await storedRow(t.tenantId, application.id)).clientSecretEnc
  const mark = await auditMark(server, t.tenantId)
  const rotated = await server.request(
    'POST',
    `/v1/${t.slug}/applications/${application.id}/secret`,
    undefined,
    { token: admin },
  )
  assert.equal(rotated.status, 200)
  assert.deepEqual(Object.keys(rotated.body), ['clientSecret'])
  assert.notEqual(rotated.body.clientSecret, clientSecret)
  assert.notEqual((await storedRow(t.tenantId, application.id)).clientSecretEnc, before)
  const deleted = await server.request(
    'DELETE',
    `/v1/${t.slug}/applications/${application.id}`,
    undefined,
    {
      token: admin,
    },
  )
  assert.equal(deleted.status, 200)
  assert.deepEqual(deleted.body, { ok: true })
  assert.equal(await storedRow(t.tenantId, application.id), undefined)
  assert.deepEqual(await actionsSince(server, t.tenantId, mark), [
    'ApplicationDeleted',
    'ApplicationSecretRotated',
  ])
  const again = await server.request(
    'DELETE',
    `/v1/${t.slug}/applications/${application.id}`,
    undefined,
    {
      token: admin,
    },
  )
  expectError(again, 404, 'not_found')
})

test('applications isolation: another tenant’s application is 404 on every route, and untouched', async () => {
  const other = await createTenant(server)
  const theirs = (
    await create({ name: 'Theirs', type: 'web' }, other.admin.accessToken, other.slug)
  ).body.application
  const before = await tenantSnapshot(server, other.tenantId)
  const path = `/v1/${t.slug}/applications/${theirs.id}`
  for (const [method, url, body] of [
    ['GET', path, undefined],
    ['PATCH', path, { name: 'mine now' }],
    ['POST', `${path}/secret`, undefined],
    ['DELETE', path, undefined],
  ] as const) {
    const res = await unchanged(server, t.tenantId, () =>
      server.request(method, url, body, { token: admin }),
    )
    expectError(res, 404, 'not_found')
  }
  const list = await server.request('GET', `/v1/${t.slug}/applications?limit=200`, undefined, {
    token: admin,
  })
  assert.ok(!list.body.items.some((a: { id: string }) => a.id === theirs.id))
  assert.deepEqual(await tenantSnapshot(server, other.tenantId), before)
  // Malformed and unknown ids are 404 too.
  for (const id of ['not-a-uuid', crypto.randomUUID()]) {
    expectError(
      await server.request('GET', `/v1/${t.slug}/applications/${id}`, undefined, { token: admin }),
      404,
      'not_found',
    )
  }
})

test('applications admin rules: a Member is 403 admin_required, no token 401; an API key may manage them', async () => {
  const member = await memberToken(server, t.slug)
  const refused = await unchanged(server, t.tenantId, () =>
    create({ name: 'A', type: 'web' }, member),
  )
  expectError(refused, 403, 'admin_required')
  const listRefused = await server.request('GET', `/v1/${t.slug}/applications`, undefined, {
    token: member,
  })
  expectError(listRefused, 403, 'admin_required')
  const anonymous = await unchanged(server, t.tenantId, () =>
    server.request('POST', `/v1/${t.slug}/applications`, { name: 'A', type: 'web' }),
  )
  assert.equal(anonymous.status, 401)
  const key = await insertApiKey(server, t.tenantId)
  const made = await create(
    { name: 'By key', type: 'spa', redirectUris: ['https://k.example.com/'] },
    key,
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const listed = await server.request('GET', `/v1/${t.slug}/applications`, undefined, {
    token: key,
  })
  assert.equal(listed.status, 200)
})

test('npm run rotate-keys re-seals client secrets under the first ENCRYPTION_KEYS entry; the secret is the same', async () => {
  const { application, clientSecret } = (await create({ name: 'Sealed', type: 'web' })).body
  const [v1] = server.deps.config.encryptionKeys
  const rotated = new FieldCipher([{ version: 'v2', key: Buffer.alloc(32, 42) }, v1])
  // This tenant's rows only (a shared database holds other tests' applications): the scan
  // walks (tenant_id, id) order, so it starts at the tenant and stops past it.
  const column = clientSecretColumn.rotation(server.deps.db, rotated)
  const start = { tenantId: t.tenantId, id: '00000000-0000-0000-0000-000000000000', sealed: '' }
  const own: typeof column = {
    ...column,
    scan: async (after, limit) =>
      (await column.scan(after ?? start, limit)).filter((r) => r.tenantId === t.tenantId),
  }
  const report = await rotateColumn(rotated, own)
  assert.ok(report.rotated >= 1, JSON.stringify(report))
  assert.deepEqual(report.unreadable, [])
  const sealed = (await storedRow(t.tenantId, application.id)).clientSecretEnc as string
  assert.equal(rotated.versionOf(sealed), 'v2')
  assert.equal(openSecret(rotated, t.tenantId, application.id, sealed), clientSecret)
  // Bound to its row: the sealed value does not open as another application's.
  assert.equal(openSecret(rotated, t.tenantId, crypto.randomUUID(), sealed), undefined)
})

test('applications: with OIDC_BACKCHANNEL_ALLOW_LOOPBACK (development and tests) a loopback back-channel URI is accepted, and only loopback', async (ctx) => {
  const dev = await startTestServer(ctx, { oidcBackchannelAllowLoopback: true })
  const tenant = await createTenant(dev)
  const make = (uri: string) =>
    dev.request(
      'POST',
      `/v1/${tenant.slug}/applications`,
      { name: 'A', type: 'web', backchannelLogoutUri: uri },
      { token: tenant.admin.accessToken },
    )
  for (const uri of ['http://127.0.0.1:8080/bc', 'http://localhost:3000/bc', 'https://[::1]/bc']) {
    const res = await make(uri)
    assert.equal(res.status, 200, `${uri}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.application.backchannelLogoutUri, uri)
  }
  for (const uri of [
    'http://10.1.2.3/bc',
    'https://192.168.1.1/bc',
    'https://169.254.169.254/latest/meta-data',
    'http://evil.example/bc',
  ]) {
    const res = await unchanged(dev, tenant.tenantId, () => make(uri))
    expectValidation(res, 'body.backchannelLogoutUri')
  }
})
