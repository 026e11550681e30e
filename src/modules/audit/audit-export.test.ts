// GET audit/export (CONTRACT §13): every matching event, oldest first, as NDJSON streamed a
// keyset page at a time; and the live user's address (userEmail) on the list and the export.
import assert from 'node:assert/strict'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { sql } from '../../db/orm.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { AuditAction } from './actions.ts'
import type { Actor, AuditEntry } from './recorder.ts'
import { EXPORT_PAGE, exportProbe } from './service.ts'

const ACTOR: Actor = { type: 'system', id: null, ip: '192.0.2.9', userAgent: 'export-test' }

let server: TestServer
let t: TenantFixture
let other: TenantFixture

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
})

// Each test's own tally of what the export loop did, by tenant.
const pages = new Map<string, number>()
const ends = new Map<string, (completed: boolean) => void>()
exportProbe.onPage = (tenantId) => pages.set(tenantId, (pages.get(tenantId) ?? 0) + 1)
exportProbe.onEnd = (tenantId, completed) => ends.get(tenantId)?.(completed)
after(() => {
  exportProbe.onPage = undefined
  exportProbe.onEnd = undefined
})

type Item = Record<string, any>

/**
 * Stores `count` events straight in the table, `perMs` of them per millisecond from `start`
 * (so that ties on created_at are ordered by id), each with `pad` characters of metadata.
 */
async function bulk(tenantId: string, count: number, start: Date, pad = 0, perMs = 3) {
  await server.deps.db.execute(sql`
    INSERT INTO audit_events (tenant_id, id, action, actor_type, metadata, created_at)
    SELECT ${tenantId}, gen_random_uuid(),
      CASE WHEN n % 2 = 1 THEN 'UserLogin' ELSE 'UserLogout' END, 'system',
      jsonb_build_object('n', n, 'pad', repeat('x', ${pad}::int)),
      ${start.toISOString()}::timestamptz + (n / ${perMs}::int) * interval '1 millisecond'
    FROM generate_series(0, ${count - 1}::int) AS n`)
}

async function exportRes(slug: string, query = '', token = t.admin.accessToken) {
  return fetch(`${server.url}/v1/${slug}/audit/export${query}`, {
    headers: { authorization: `Bearer ${token}` },
  })
}

async function exportLines(fixture: TenantFixture, query = '', token = fixture.admin.accessToken) {
  const res = await exportRes(fixture.slug, query, token)
  const text = await res.text()
  assert.equal(res.status, 200, text.slice(0, 500))
  assert.equal(res.headers.get('content-type'), 'application/x-ndjson')
  if (text === '') return []
  assert.ok(text.endsWith('\n'), 'every line ends with a newline')
  return text
    .slice(0, -1)
    .split('\n')
    .map((l) => JSON.parse(l) as Item)
}

/** Opens the export on a socket and answers the response, its body not yet read. */
function openExport(slug: string, token: string): Promise<IncomingMessage> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: `/v1/${slug}/audit/export`,
      headers: { authorization: `Bearer ${token}` },
    })
    req.on('response', resolve)
    req.on('error', reject)
    req.end()
  })
}

function byPosition(a: Item, b: Item) {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id < b.id ? -1 : 1
}

async function record(tenantId: string, action: AuditAction, userId?: string) {
  server.clock.advance(1)
  await server.deps.audit.record(server.deps.db, tenantId, ACTOR, [
    { action, userId } as AuditEntry,
  ])
  return server.clock.now().toISOString()
}

describe('GET audit/export', () => {
  test('every event, oldest first by (createdAt, id), across several pages, as the list shows it', async () => {
    const fresh = await createTenant(server)
    await bulk(fresh.tenantId, 2 * EXPORT_PAGE + 600, new Date('2021-03-04T05:06:07.000Z'))
    await bulk(other.tenantId, 50, new Date('2021-03-04T05:06:07.000Z'))
    pages.set(fresh.tenantId, 0)
    const lines = await exportLines(fresh)
    const rows = await server.deps.db.execute(
      sql`SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = ${fresh.tenantId}`,
    )
    const total = Number((rows as any).rows?.[0]?.n ?? (rows as any)[0]?.n)
    assert.equal(lines.length, total)
    assert.ok(pages.get(fresh.tenantId)! >= 3, 'read in several pages')
    assert.deepEqual(
      lines.map((l) => l.id),
      [...lines].sort(byPosition).map((l) => l.id),
    )
    assert.equal(new Set(lines.map((l) => l.id)).size, lines.length, 'no event twice')
    // The bulk events in their stored order: ties on createdAt by id.
    const bulkOnes = lines.filter((l) => typeof l.metadata.n === 'number')
    assert.equal(bulkOnes.length, 2 * EXPORT_PAGE + 600)
    // The newest 200 as the list shows them, field for field.
    const listed = await server.request('GET', `/v1/${fresh.slug}/audit?limit=200`, undefined, {
      token: fresh.admin.accessToken,
    })
    assert.equal(listed.status, 200)
    assert.deepEqual(lines.slice(-200).reverse(), listed.body.items)
  })

  test('since is inclusive, until exclusive, action filters; another tenant never appears', async () => {
    const fresh = await createTenant(server)
    const t1 = await record(fresh.tenantId, 'UserLogin')
    const t2 = await record(fresh.tenantId, 'UserLogout')
    const t3 = await record(fresh.tenantId, 'UserLogin')
    await record(other.tenantId, 'UserLogin')
    const t4 = await record(fresh.tenantId, 'UserLogin')
    const at = (items: Item[]) => items.map((i) => [i.action, i.createdAt])
    assert.deepEqual(at(await exportLines(fresh, `?since=${t2}&until=${t4}`)), [
      ['UserLogout', t2],
      ['UserLogin', t3],
    ])
    assert.deepEqual(at(await exportLines(fresh, `?since=${t1}&action=UserLogin`)), [
      ['UserLogin', t1],
      ['UserLogin', t3],
      ['UserLogin', t4],
    ])
    assert.deepEqual(at(await exportLines(fresh, `?until=${t1}&action=UserLogin`)), [])
    assert.deepEqual(await exportLines(fresh, `?since=${t4}&until=${t4}`), [])
    // An offset is the same instant.
    const t3Offset = new Date(Date.parse(t3) + 2 * 3600_000).toISOString().replace('Z', '+02:00')
    assert.deepEqual(at(await exportLines(fresh, `?since=${encodeURIComponent(t3Offset)}`)), [
      ['UserLogin', t3],
      ['UserLogin', t4],
    ])
    const all = await exportLines(fresh)
    const otherIds = new Set((await exportLines(other)).map((l) => l.id))
    assert.ok(all.length > 0)
    for (const line of all) assert.ok(!otherIds.has(line.id))
    const key = await createKey(server, fresh.slug, fresh.admin.accessToken)
    const byKey = await exportLines(fresh, `?since=${t1}&until=${t4}`, key.plaintext)
    assert.deepEqual(at(byKey), [
      ['UserLogin', t1],
      ['UserLogout', t2],
      ['UserLogin', t3],
    ])
  })

  const bad: [string, string][] = [
    ['since=yesterday', 'querystring.since'],
    ['since=2025-13-01T00:00:00Z', 'querystring.since'],
    ['since=2025-01-01', 'querystring.since'],
    ['until=tomorrow', 'querystring.until'],
    ['until=2025-01-01T25:00:00Z', 'querystring.until'],
    ['action=Bogus', 'querystring.action'],
    ['action=userlogin', 'querystring.action'],
  ]
  for (const [query, issue] of bad) {
    test(`?${query} is a 400 naming the parameter, nothing streamed or read`, async () => {
      pages.set(t.tenantId, 0)
      await unchanged(server, t.tenantId, async () => {
        const res = await server.request('GET', `/v1/${t.slug}/audit/export?${query}`, undefined, {
          token: t.admin.accessToken,
        })
        expectValidation(res, issue)
      })
      assert.equal(pages.get(t.tenantId), 0)
    })
  }

  test('no token 401; a Member 403; another tenant’s admin 401', async () => {
    const member = await memberToken(server, t.slug)
    const url = `/v1/${t.slug}/audit/export`
    pages.set(t.tenantId, 0)
    await unchanged(server, t.tenantId, async () => {
      expectError(await server.request('GET', url), 401, 'token_missing')
      expectError(
        await server.request('GET', url, undefined, { token: member }),
        403,
        'admin_required',
      )
      expectError(
        await server.request('GET', url, undefined, { token: other.admin.accessToken }),
        401,
        'token_invalid',
      )
    })
    assert.equal(pages.get(t.tenantId), 0)
  })

  test('streams: chunked, and the first line arrives before the last page is read', async () => {
    const fresh = await createTenant(server)
    // Pages of about 2 MB: more than the socket buffers hold while the client reads nothing.
    await bulk(fresh.tenantId, 5 * EXPORT_PAGE, new Date('2022-01-01T00:00:00Z'), 2000)
    pages.set(fresh.tenantId, 0)
    const ended = new Promise<boolean>((resolve) => ends.set(fresh.tenantId, resolve))
    const res = await openExport(fresh.slug, fresh.admin.accessToken)
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['transfer-encoding'], 'chunked')
    assert.equal(res.headers['content-length'], undefined)
    let pagesAtFirst = -1
    let text = ''
    res.setEncoding('utf8')
    for await (const chunk of res) {
      if (pagesAtFirst < 0) pagesAtFirst = pages.get(fresh.tenantId)!
      text += chunk
    }
    assert.ok(
      pagesAtFirst >= 1 && pagesAtFirst < 5,
      `pages read at the first line: ${pagesAtFirst}`,
    )
    assert.equal(text.split('\n').filter(Boolean).length >= 5 * EXPORT_PAGE, true)
    assert.equal(await ended, true)
  })

  test('a client that goes away stops the reading, with no unhandled error', async () => {
    const fresh = await createTenant(server)
    await bulk(fresh.tenantId, 5 * EXPORT_PAGE, new Date('2022-01-01T00:00:00Z'), 2000)
    const failures: unknown[] = []
    const onFailure = (e: unknown) => failures.push(e)
    process.on('unhandledRejection', onFailure)
    process.on('uncaughtException', onFailure)
    try {
      pages.set(fresh.tenantId, 0)
      const ended = new Promise<boolean>((resolve) => ends.set(fresh.tenantId, resolve))
      const res = await openExport(fresh.slug, fresh.admin.accessToken)
      await new Promise((resolve) => res.once('data', resolve))
      res.destroy()
      assert.equal(await ended, false, 'the loop ended before the last page')
      assert.ok(pages.get(fresh.tenantId)! < 6, `pages read: ${pages.get(fresh.tenantId)}`)
      // The service goes on answering, and a full export still works.
      const again = await exportLines(fresh, '?action=UserLogin')
      assert.equal(again.length, (5 * EXPORT_PAGE) / 2)
      assert.deepEqual(failures, [])
    } finally {
      process.off('unhandledRejection', onFailure)
      process.off('uncaughtException', onFailure)
    }
  })
})

describe('userEmail on the list and the export', () => {
  test('the address of a live user of the tenant; never a deleted one’s', async () => {
    const fresh = await createTenant(server)
    const member = await signup(server, fresh.slug)
    const userId = member.user.id as string
    await record(fresh.tenantId, 'UserUpdated', userId)
    const strangerId = uuidv7()
    await record(fresh.tenantId, 'UserUpdated', strangerId)
    const listed = async () =>
      (
        await server.request('GET', `/v1/${fresh.slug}/audit?action=UserUpdated`, undefined, {
          token: fresh.admin.accessToken,
        })
      ).body.items as Item[]
    const [stranger, live] = await listed()
    assert.equal(live.userEmail, member.email)
    assert.equal('userEmail' in stranger, false)
    const exported = await exportLines(fresh, '?action=UserUpdated')
    assert.deepEqual(exported, [live, stranger])

    const gone = await server.request('DELETE', `/v1/${fresh.slug}/users/${userId}`, undefined, {
      token: fresh.admin.accessToken,
    })
    assert.equal(gone.status, 200, JSON.stringify(gone.body))
    const about = [...(await listed()), ...(await exportLines(fresh))].filter(
      (i) => i.userId === userId,
    )
    assert.ok(about.length >= 2)
    for (const item of about) assert.equal('userEmail' in item, false, JSON.stringify(item))
  })
})
