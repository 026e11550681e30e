// GET api-keys and DELETE api-keys/{id} (SPEC, Administration and API key state table:
// revoked keys hidden unless includeRevoked; CONTRACT §2 Lists, foreign ids 404).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditRows, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
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

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
  admin = t.admin.accessToken
})

const path = (slug = t.slug) => `/v1/${slug}/api-keys`

async function keyRow(tenantId: string, id: string) {
  const rows = await server.deps.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id)))
  return rows[0]
}

describe('GET api-keys', () => {
  let slug: string
  let token: string
  before(async () => {
    const fresh = await createTenant(server)
    slug = fresh.slug
    token = fresh.admin.accessToken
  })

  test('lists newest first, hides revoked keys unless includeRevoked, never the secret', async () => {
    const first = await createKey(server, slug, token, { name: 'first', environment: 'live' })
    server.clock.advance(1)
    const second = await createKey(server, slug, token, { name: 'second', environment: 'test' })
    server.clock.advance(1)
    const third = await createKey(server, slug, token, { name: 'third', environment: 'live' })
    const del = await server.request('DELETE', `${path(slug)}/${second.apiKey.id}`, undefined, {
      token,
    })
    assert.equal(del.status, 200)

    const res = await server.request('GET', path(slug), undefined, { token })
    assert.equal(res.status, 200)
    assert.deepEqual(Object.keys(res.body).sort(), ['items', 'nextCursor'])
    assert.deepEqual(
      res.body.items.map((k: any) => k.name),
      ['third', 'first'],
    )
    assert.equal(res.body.nextCursor, null)
    assert.deepEqual(res.body.items[0], third.apiKey)
    for (const item of res.body.items) assert.deepEqual(Object.keys(item).sort(), RECORD_KEYS)
    const text = JSON.stringify(res.body)
    for (const k of [first, second, third]) assert.ok(!text.includes(k.plaintext))
    assert.ok(!text.includes(hashToken(first.plaintext)))

    const all = await server.request('GET', `${path(slug)}?includeRevoked=true`, undefined, {
      token,
    })
    assert.deepEqual(
      all.body.items.map((k: any) => [k.name, k.revokedAt !== null]),
      [
        ['third', false],
        ['second', true],
        ['first', false],
      ],
    )
    const explicit = await server.request('GET', `${path(slug)}?includeRevoked=false`, undefined, {
      token,
    })
    assert.equal(explicit.body.items.length, 2)
  })

  test('pages with limit and cursor cover every key exactly once, ties in time included', async () => {
    const fresh = await createTenant(server)
    const names: string[] = []
    for (let i = 0; i < 5; i++) {
      names.push(`key-${i}`)
      await createKey(server, fresh.slug, fresh.admin.accessToken, {
        name: `key-${i}`,
        environment: 'live',
      })
    }
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const q: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2'
      const res = await server.request('GET', path(fresh.slug) + q, undefined, {
        token: fresh.admin.accessToken,
      })
      assert.equal(res.status, 200)
      assert.ok(res.body.items.length <= 2)
      seen.push(...res.body.items.map((k: any) => k.name))
      cursor = res.body.nextCursor
      pages++
    } while (cursor)
    assert.equal(pages, 3)
    // The clock stood still: all five share createdAt, and the id breaks the tie.
    assert.deepEqual([...seen].sort(), names)
  })

  test("another tenant's keys are never listed, even with its cursor", async () => {
    const a = await createTenant(server)
    const b = await createTenant(server)
    for (let i = 0; i < 3; i++) await createKey(server, a.slug, a.admin.accessToken)
    const mine = await createKey(server, b.slug, b.admin.accessToken)
    const pageA = await server.request('GET', `${path(a.slug)}?limit=1`, undefined, {
      token: a.admin.accessToken,
    })
    assert.ok(pageA.body.nextCursor)
    const listB = await server.request('GET', path(b.slug), undefined, {
      token: b.admin.accessToken,
    })
    assert.deepEqual(
      listB.body.items.map((k: any) => k.id),
      [mine.apiKey.id],
    )
    const foreignCursor = await server.request(
      'GET',
      `${path(b.slug)}?cursor=${pageA.body.nextCursor}`,
      undefined,
      { token: b.admin.accessToken },
    )
    assert.equal(foreignCursor.status, 200)
    assert.deepEqual(foreignCursor.body.items, [])
  })

  const badQueries = [
    ['limit=0', 'querystring.limit'],
    ['limit=201', 'querystring.limit'],
    ['limit=ten', 'querystring.limit'],
    ['limit=1.5', 'querystring.limit'],
    ['includeRevoked=maybe', 'querystring.includeRevoked'],
    ['cursor=not-a-cursor', 'querystring.cursor'],
    [`cursor=${'x'.repeat(513)}`, 'querystring.cursor'],
  ]
  for (const [query, issue] of badQueries) {
    test(`?${query.slice(0, 40)} is a 400`, async () => {
      await unchanged(server, t.tenantId, async () => {
        expectValidation(
          await server.request('GET', `${path()}?${query}`, undefined, { token: admin }),
          issue,
        )
      })
    })
  }
})

describe('DELETE api-keys/{id}', () => {
  test('revokes the key: ApiKeyRevoked, refused at once, hidden from the list', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin)
    const audit = `/v1/${t.slug}/audit?limit=1`
    assert.equal((await server.request('GET', audit, undefined, { token: plaintext })).status, 200)

    const res = await server.request('DELETE', `${path()}/${apiKey.id}`, undefined, {
      token: admin,
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })
    const row = await keyRow(t.tenantId, apiKey.id)
    assert.equal(row.revokedAt?.toISOString(), server.clock.now().toISOString())
    const events = (await auditRows(server, t.tenantId, 'ApiKeyRevoked')).filter(
      (e) => e.metadata.apiKeyId === apiKey.id,
    )
    assert.equal(events.length, 1)
    assert.equal(events[0].actorId, t.admin.user.id)

    expectError(
      await server.request('GET', audit, undefined, { token: plaintext }),
      401,
      'invalid_api_key',
    )
    const list = await server.request('GET', path(), undefined, { token: admin })
    assert.ok(!list.body.items.some((k: any) => k.id === apiKey.id))
  })

  test('revoking a revoked key answers ok and records nothing more', async () => {
    const { apiKey } = await createKey(server, t.slug, admin)
    const url = `${path()}/${apiKey.id}`
    assert.equal((await server.request('DELETE', url, undefined, { token: admin })).status, 200)
    server.clock.advance(5)
    await unchanged(server, t.tenantId, async () => {
      const again = await server.request('DELETE', url, undefined, { token: admin })
      assert.equal(again.status, 200)
      assert.deepEqual(again.body, { ok: true })
    })
  })

  test('an unknown or malformed id is 404 not_found', async () => {
    await unchanged(server, t.tenantId, async () => {
      for (const id of [
        '00000000-0000-7000-8000-000000000000',
        'abc',
        '1',
        "x' OR '1'='1",
        'k'.repeat(100),
      ]) {
        const res = await server.request(
          'DELETE',
          `${path()}/${encodeURIComponent(id)}`,
          undefined,
          {
            token: admin,
          },
        )
        expectError(res, 404, 'not_found')
      }
    })
  })

  test("another tenant's key is 404 through this tenant, and keeps working", async () => {
    const foreign = await createKey(server, other.slug, other.admin.accessToken)
    await unchanged(server, other.tenantId, async () => {
      await unchanged(server, t.tenantId, async () => {
        const res = await server.request('DELETE', `${path()}/${foreign.apiKey.id}`, undefined, {
          token: admin,
        })
        expectError(res, 404, 'not_found')
      })
    })
    const still = await server.request('GET', `/v1/${other.slug}/audit?limit=1`, undefined, {
      token: foreign.plaintext,
    })
    assert.equal(still.status, 200)
  })
})
