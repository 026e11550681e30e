// GET users: the paged list of a tenant's users (SPEC, Administration; CONTRACT §2, Lists).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { PUBLIC_USER_FIELDS, usersAdmin } from '../../../test/fixtures/users.ts'
import { startTestServer, type TestServer } from '../../../test/helpers.ts'
import { eq, sql } from '../../db/orm.ts'
import { users } from '../../db/schema.ts'

let server: TestServer
let h: ReturnType<typeof usersAdmin>
before(async (t) => {
  server = await startTestServer(t)
  h = usersAdmin(server)
})

test('GET users lists the tenant users with the public fields only', async () => {
  const { t, admin, adminId, member } = await h.setup()
  const res = await h.list(t, '', admin)
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body).sort(), ['items', 'nextCursor'])
  assert.equal(res.body.nextCursor, null)
  assert.deepEqual(
    res.body.items.map((u: any) => u.id),
    [adminId, member.user.id],
  )
  for (const item of res.body.items) assert.deepEqual(Object.keys(item).sort(), PUBLIC_USER_FIELDS)
  assert.deepEqual(res.body.items[1], member.user)
  assert.doesNotMatch(JSON.stringify(res.body), /argon2|passwordHash|totpSecret/)
})

test('GET users writes each time as toISOString would: UTC, milliseconds, microseconds dropped', async () => {
  const { t, admin, member } = await h.setup()
  // Times written by the database itself carry microseconds, and one is before 1970.
  await server.deps.db
    .update(users)
    .set({
      createdAt: sql`'1969-07-20 20:17:40.999999+00'::timestamptz`,
      lastLoginAt: sql`'2026-02-03 04:05:06.123999-05'::timestamptz`,
    })
    .where(eq(users.id, member.user.id))
  const res = await h.list(t, '', admin)
  assert.equal(res.status, 200)
  const item = res.body.items.find((u: any) => u.id === member.user.id)
  assert.equal(item.createdAt, new Date('1969-07-20T20:17:40.999Z').toISOString())
  assert.equal(item.lastLoginAt, '2026-02-03T09:05:06.123Z')
  const [row] = await server.deps.db.select().from(users).where(eq(users.id, member.user.id))
  assert.equal(item.createdAt, row.createdAt.toISOString())
  assert.equal(item.lastLoginAt, row.lastLoginAt?.toISOString())
})

test('GET users pages with limit and cursor: every user exactly once, in creation order', async () => {
  const { t, admin } = await h.setup()
  await h.insertMembers(t.tenantId, 6)
  const all = await server.deps.db
    .select({ id: users.id, createdAt: users.createdAt })
    .from(users)
    .where(eq(users.tenantId, t.tenantId))
  const expected = all
    .sort((a, b) => +a.createdAt - +b.createdAt || a.id.localeCompare(b.id))
    .map((u) => u.id)
  assert.equal(expected.length, 8)

  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const query: string = `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const res = await h.list(t, query, admin)
    assert.equal(res.status, 200)
    assert.ok(res.body.items.length <= 3)
    seen.push(...res.body.items.map((u: any) => u.id))
    cursor = res.body.nextCursor
    pages++
  } while (cursor)
  assert.equal(pages, 3)
  assert.deepEqual(seen, expected)
})

test('GET users: limit defaults to 50 and goes up to 200', async () => {
  const { t, admin } = await h.setup()
  await h.insertMembers(t.tenantId, 60)
  const first = await h.list(t, '', admin)
  assert.equal(first.body.items.length, 50)
  assert.equal(typeof first.body.nextCursor, 'string')
  const rest = await h.list(t, `?cursor=${first.body.nextCursor}`, admin)
  assert.equal(rest.body.items.length, 12)
  assert.equal(rest.body.nextCursor, null)
  const big = await h.list(t, '?limit=200', admin)
  assert.equal(big.body.items.length, 62)
  assert.equal(big.body.nextCursor, null)
})

test('GET users refuses a bad limit or cursor with 400 validation', async () => {
  const { t, admin } = await h.setup()
  for (const limit of ['0', '201', '-1', 'abc', '1.5', '']) {
    expectValidation(await h.list(t, `?limit=${limit}`, admin), 'querystring.limit')
  }
  const notACursor = Buffer.from(JSON.stringify({ id: 1 })).toString('base64url')
  const badId = Buffer.from(JSON.stringify([new Date().toISOString(), 'nope'])).toString(
    'base64url',
  )
  for (const cursor of ['garbage!', notACursor, badId, 'x'.repeat(600)]) {
    expectValidation(await h.list(t, `?cursor=${cursor}`, admin), 'querystring.cursor')
  }
})

test('GET users hides soft-deleted users', async () => {
  const { t, admin, member } = await h.setup()
  assert.equal((await h.del(t, member.user.id, admin)).status, 200)
  const res = await h.list(t, '', admin)
  assert.deepEqual(
    res.body.items.map((u: any) => u.id),
    [t.admin.user.id],
  )
})

test('GET users: a Member gets 403 admin_required; an API key of the tenant is accepted', async () => {
  const { t, member } = await h.setup()
  expectError(await h.list(t, '', member.accessToken), 403, 'admin_required')
  expectError(await h.list(t, ''), 401, 'token_missing')
  const key = await insertApiKey(server, t.tenantId, { environment: 'test' })
  const res = await h.list(t, '', key)
  assert.equal(res.status, 200)
  assert.equal(res.body.items.length, 2)
})

test("tenant isolation: GET users shows only the tenant's own users; foreign credentials are 401", async () => {
  const a = await h.setup()
  const b = await h.setup()
  const bKey = await insertApiKey(server, b.t.tenantId)
  const res = await h.list(a.t, '?limit=200', a.admin)
  assert.ok(res.body.items.every((u: any) => u.tenantId === a.t.tenantId))
  expectError(await h.list(a.t, '', b.admin), 401, 'token_invalid')
  expectError(await h.list(a.t, '', bKey), 401, 'invalid_api_key')
  // A cursor made in another tenant only positions the list: it shows nothing of B.
  await h.insertMembers(b.t.tenantId, 3)
  const bPage = await h.list(b.t, '?limit=1', b.admin)
  const crossed = await h.list(a.t, `?cursor=${bPage.body.nextCursor}`, a.admin)
  assert.equal(crossed.status, 200)
  assert.ok(crossed.body.items.every((u: any) => u.tenantId === a.t.tenantId))
})
