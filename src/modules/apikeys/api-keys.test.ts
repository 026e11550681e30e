// POST api-keys, and who may call the api-keys routes (SPEC, Administration and API key
// state table; CONTRACT §2 API key record, §4 api_key_not_allowed).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditRows, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { apiKeys } from '../../db/schema.ts'
import { hashToken } from '../../lib/crypto.ts'

const RECORD_KEYS = [
  'createdAt',
  'environment',
  'expiresAt',
  'id',
  'lastUsedAt',
  'name',
  'permissions',
  'prefix',
  'revokedAt',
]

let server: TestServer
let t: TenantFixture
let other: TenantFixture
let admin: string
let member: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
  admin = t.admin.accessToken
  member = await memberToken(server, t.slug)
})

const path = (slug = t.slug) => `/v1/${slug}/api-keys`

async function keyRow(tenantId: string, id: string) {
  const rows = await server.deps.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id)))
  return rows[0]
}

describe('POST api-keys', () => {
  test('creates a live key: plaintext once, ak_live_ prefix, the record, ApiKeyCreated', async () => {
    const res = await server.request(
      'POST',
      path(),
      { name: 'billing backend', environment: 'live' },
      { token: admin },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const { plaintext, apiKey } = res.body
    assert.match(plaintext, /^ak_live_[A-Za-z0-9_-]{43}$/)
    assert.deepEqual(Object.keys(apiKey).sort(), RECORD_KEYS)
    assert.equal(apiKey.name, 'billing backend')
    assert.equal(apiKey.environment, 'live')
    assert.equal(apiKey.prefix, plaintext.slice(0, 12))
    assert.equal(apiKey.createdAt, server.clock.now().toISOString())
    assert.equal(apiKey.expiresAt, null)
    assert.equal(apiKey.lastUsedAt, null)
    assert.equal(apiKey.revokedAt, null)

    const [event] = await auditRows(server, t.tenantId, 'ApiKeyCreated')
    assert.equal(event.actorType, 'user')
    assert.equal(event.actorId, t.admin.user.id)
    assert.equal(event.metadata.apiKeyId, apiKey.id)
    assert.equal(event.metadata.environment, 'live')
    assert.doesNotMatch(JSON.stringify(event), new RegExp(plaintext))
  })

  test('keys are stored only as a SHA-256 of the plaintext', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin)
    const row = await keyRow(t.tenantId, apiKey.id)
    assert.equal(row.keyHash, hashToken(plaintext))
    assert.doesNotMatch(JSON.stringify(row), new RegExp(plaintext.slice(12)))
  })

  test('a test key starts with ak_test_, and every key is different', async () => {
    const a = await createKey(server, t.slug, admin, { name: 'ci', environment: 'test' })
    const b = await createKey(server, t.slug, admin, { name: 'ci', environment: 'test' })
    assert.match(a.plaintext, /^ak_test_/)
    assert.equal(a.apiKey.environment, 'test')
    assert.notEqual(a.plaintext, b.plaintext)
    assert.notEqual(a.apiKey.id, b.apiKey.id)
  })

  test('expiresAt is kept and shown', async () => {
    const expiresAt = new Date(server.clock.now().getTime() + 86_400_000).toISOString()
    const { apiKey } = await createKey(server, t.slug, admin, {
      name: 'short-lived',
      environment: 'live',
      expiresAt,
    })
    assert.equal(apiKey.expiresAt, expiresAt)
  })

  test('names of 1 and 120 characters are accepted', async () => {
    await createKey(server, t.slug, admin, { name: 'x', environment: 'live' })
    await createKey(server, t.slug, admin, { name: 'n'.repeat(120), environment: 'live' })
  })

  const badBodies: [string, unknown, string | undefined][] = [
    ['missing name', { environment: 'live' }, 'body.name'],
    ['empty name', { name: '', environment: 'live' }, 'body.name'],
    ['a 121-character name', { name: 'n'.repeat(121), environment: 'live' }, 'body.name'],
    ['a number as name', { name: 5, environment: 'live' }, 'body.name'],
    ['an array as name', { name: ['a'], environment: 'live' }, 'body.name'],
    ['missing environment', { name: 'k' }, 'body.environment'],
    ['an unknown environment', { name: 'k', environment: 'prod' }, 'body.environment'],
    ['environment in capitals', { name: 'k', environment: 'LIVE' }, 'body.environment'],
    [
      'a malformed expiresAt',
      { name: 'k', environment: 'live', expiresAt: 'tomorrow' },
      'body.expiresAt',
    ],
    [
      'a numeric expiresAt',
      { name: 'k', environment: 'live', expiresAt: 1893456000 },
      'body.expiresAt',
    ],
    ['an array body', [{ name: 'k', environment: 'live' }], undefined],
    ['a null body', null, undefined],
  ]
  for (const [what, body, issue] of badBodies) {
    test(`${what} is a 400 and creates nothing`, async () => {
      await unchanged(server, t.tenantId, async () => {
        const res = await server.request('POST', path(), body, { token: admin })
        expectValidation(res, issue)
      })
    })
  }

  test('an expiresAt in the past is a 400 and creates nothing', async () => {
    const past = new Date(server.clock.now().getTime() - 1000).toISOString()
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request(
        'POST',
        path(),
        { name: 'k', environment: 'live', expiresAt: past },
        { token: admin },
      )
      expectValidation(res, 'body.expiresAt')
    })
  })

  test('malformed JSON, a wrong content type and an oversized body are 400s', async () => {
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('POST', path(), undefined, { token: admin, raw: '{"name": "k",' }),
        400,
        'malformed_json',
      )
      expectError(
        await server.request('POST', path(), undefined, {
          token: admin,
          raw: 'name=k',
          headers: { 'content-type': 'text/plain' },
        }),
        400,
        'unsupported_media_type',
      )
      expectError(
        await server.request(
          'POST',
          path(),
          { name: 'k', environment: 'live', pad: 'x'.repeat(70_000) },
          { token: admin },
        ),
        400,
        'body_too_large',
      )
    })
  })

  test('unknown properties are ignored, never stored', async () => {
    const { apiKey } = await createKey(server, t.slug, admin, {
      name: 'k',
      environment: 'live',
      revokedAt: '2020-01-01T00:00:00.000Z',
      keyHash: 'mine',
    })
    assert.equal(apiKey.revokedAt, null)
    assert.notEqual((await keyRow(t.tenantId, apiKey.id)).keyHash, 'mine')
  })
})

describe('api-keys: who may call them', () => {
  const calls = () =>
    [
      ['POST', path(), { name: 'k', environment: 'live' }],
      ['GET', path(), undefined],
      ['DELETE', `${path()}/00000000-0000-7000-8000-000000000000`, undefined],
    ] as const

  test('without a token: 401 token_missing', async () => {
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url, body] of calls()) {
        expectError(await server.request(method, url, body), 401, 'token_missing')
      }
    })
  })

  test('a Member: 403 admin_required', async () => {
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url, body] of calls()) {
        expectError(
          await server.request(method, url, body, { token: member }),
          403,
          'admin_required',
        )
      }
    })
  })

  test('an API key, even a valid one of this tenant: 403 api_key_not_allowed', async () => {
    const { plaintext } = await createKey(server, t.slug, admin)
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url, body] of calls()) {
        expectError(
          await server.request(method, url, body, { token: plaintext }),
          403,
          'api_key_not_allowed',
        )
      }
    })
  })

  test("another tenant's admin token: 401 token_invalid", async () => {
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url, body] of calls()) {
        expectError(
          await server.request(method, url, body, { token: other.admin.accessToken }),
          401,
          'token_invalid',
        )
      }
    })
  })

  test('an unknown tenant: 404 tenant_not_found', async () => {
    for (const [method, url, body] of calls()) {
      const res = await server.request(method, url.replace(t.slug, 'no-such-tenant'), body, {
        token: admin,
      })
      expectError(res, 404, 'tenant_not_found')
    }
  })
})
