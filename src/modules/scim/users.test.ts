// SCIM Users beyond the clients' sequences (CONTRACT §14): paging by startIndex/count in a
// stable order with count clamped to 200; If-Match on PUT and PATCH; a password set by PUT
// under §4's rules, never answered, ending the sessions; tenant isolation (another
// tenant's ids are 404 and untouched); the last Admin can be neither deactivated nor
// deleted, as on the admin route.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, sessionRows, unchanged, userRow } from '../../../test/db.ts'
import {
  expectScimError,
  PATCH_SCHEMA,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import { signup, startTestServer, type TestServer } from '../../../test/helpers.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx)
})

const create = async (t: ScimTenant, userName: string, more: Record<string, unknown> = {}) => {
  const res = await t.scim('POST', '/Users', { schemas: [USER_SCHEMA], userName, ...more })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

test('paging: startIndex is 1-based, count windows the stable creation order, count is clamped to 200', async () => {
  const t = await scimTenant(server)
  // The admin plus 204 users, created in parallel batches.
  for (let batch = 0; batch < 12; batch++) {
    await Promise.all(
      Array.from({ length: 17 }, (_, i) => create(t, `page-${batch * 17 + i}@example.com`)),
    )
  }
  const all: string[] = []
  for (let start = 1; ; start += 100) {
    const page = await t.scim('GET', `/Users?startIndex=${start}&count=100`)
    assert.equal(page.status, 200)
    assert.equal(page.body.totalResults, 205)
    assert.equal(page.body.startIndex, start)
    assert.equal(page.body.itemsPerPage, page.body.Resources.length)
    all.push(...page.body.Resources.map((u: { id: string }) => u.id))
    if (page.body.Resources.length < 100) break
  }
  assert.equal(all.length, 205)
  assert.equal(new Set(all).size, 205, 'no user twice across pages')

  const window = await t.scim('GET', '/Users?startIndex=3&count=2')
  assert.deepEqual(
    window.body.Resources.map((u: { id: string }) => u.id),
    all.slice(2, 4),
  )
  const clamped = await t.scim('GET', '/Users?count=1000')
  assert.equal(clamped.body.itemsPerPage, 200)
  assert.equal(clamped.body.Resources.length, 200)
  const byDefault = await t.scim('GET', '/Users')
  assert.equal(byDefault.body.itemsPerPage, 100)
  const none = await t.scim('GET', '/Users?count=0')
  assert.deepEqual([none.body.totalResults, none.body.Resources.length], [205, 0])
  const past = await t.scim('GET', '/Users?startIndex=1000')
  assert.deepEqual([past.body.totalResults, past.body.Resources.length], [205, 0])
  const huge = await t.scim('GET', '/Users?startIndex=999999999999999')
  assert.equal(huge.status, 200)
  assert.equal(huge.body.Resources.length, 0)
})

test('If-Match on PUT and PATCH: a stale tag is 412 and nothing changes; *, the current tag or a list holding it passes', async () => {
  const t = await scimTenant(server)
  const user = await create(t, 'etag@example.com', { displayName: 'First' })
  const rename = (displayName: string, ifMatch: string) =>
    t.scim(
      'PATCH',
      `/Users/${user.id}`,
      {
        schemas: [PATCH_SCHEMA],
        Operations: [{ op: 'replace', path: 'displayName', value: displayName }],
      },
      { headers: { 'if-match': ifMatch } },
    )
  const second = await rename('Second', user.meta.version)
  assert.equal(second.status, 200)
  assert.notEqual(second.body.meta.version, user.meta.version)
  // The first tag is stale now, even within the same clock tick.
  await unchanged(server, t.tenantId, async () => {
    expectScimError(await rename('Third', user.meta.version), 412)
    const put = await t.scim(
      'PUT',
      `/Users/${user.id}`,
      { schemas: [USER_SCHEMA], userName: 'etag@example.com', displayName: 'Third' },
      { headers: { 'if-match': user.meta.version } },
    )
    expectScimError(put, 412)
  })
  const listed = await rename('Third', `W/"nope", ${second.body.meta.version}`)
  assert.equal(listed.status, 200)
  assert.equal((await rename('Fourth', '*')).body.displayName, 'Fourth')
  // The strong form of the same tag matches too (SCIM's tags are compared weakly).
  const current = await t.scim('GET', `/Users/${user.id}`)
  const strong = current.headers.get('etag')?.replace(/^W\//, '') ?? ''
  assert.equal((await rename('Fifth', strong)).status, 200)
})

test('PUT with a password sets it under §4 (never answered), ends the sessions and records UserUpdated naming it', async () => {
  const t = await scimTenant(server)
  const member = await signup(server, t.slug)
  const password = 'a-fresh-provisioned-Secret-9'
  const mark = await auditMark(server, t.tenantId)
  const res = await t.scim('PUT', `/Users/${member.user.id}`, {
    schemas: [USER_SCHEMA],
    userName: member.email,
    password,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.ok(!JSON.stringify(res.body).includes(password))
  assert.ok(!('password' in res.body))
  assert.equal(
    (await sessionRows(server, t.tenantId, member.user.id)).filter((s) => !s.revokedAt).length,
    0,
  )
  const events = await auditSince(server, t.tenantId, mark)
  const updated = events.find((e) => e.action === 'UserUpdated')
  assert.deepEqual(updated?.metadata, { fields: ['password'], changes: {}, via: 'scim' })
  assert.ok(!JSON.stringify(events).includes(password), 'no password in the audit log')
  const old = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: member.email,
    password: member.password,
  })
  assert.equal(old.status, 401)
  const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: member.email,
    password,
  })
  assert.equal(login.status, 200)
})

test("tenant isolation: another tenant's user ids are 404 on GET, PUT, PATCH and DELETE, and stay as they were", async () => {
  const mine = await scimTenant(server)
  const theirs = await scimTenant(server)
  const foreign = await create(theirs, 'foreign@example.com')
  await unchanged(server, [mine.tenantId, theirs.tenantId], async () => {
    for (const id of [
      foreign.id,
      theirs.admin.user.id,
      'not-a-uuid',
      '00000000-0000-0000-0000-000000000000',
    ]) {
      expectScimError(await mine.scim('GET', `/Users/${id}`), 404)
      const put = await mine.scim('PUT', `/Users/${id}`, {
        schemas: [USER_SCHEMA],
        userName: 'taken-over@example.com',
        active: false,
      })
      expectScimError(put, 404)
      const patch = await mine.scim('PATCH', `/Users/${id}`, {
        schemas: [PATCH_SCHEMA],
        Operations: [{ op: 'replace', value: { active: false } }],
      })
      expectScimError(patch, 404)
      expectScimError(await mine.scim('DELETE', `/Users/${id}`), 404)
    }
    const list = await mine.scim('GET', '/Users?filter=userName%20eq%20%22foreign%40example.com%22')
    assert.equal(list.body.totalResults, 0)
  })
  // The other tenant's own key still sees its user.
  assert.equal((await theirs.scim('GET', `/Users/${foreign.id}`)).status, 200)
})

test('the last active Admin can be neither deactivated nor deleted through SCIM (403, as on the admin route)', async () => {
  const t = await scimTenant(server)
  const adminId = t.admin.user.id as string
  await unchanged(server, t.tenantId, async () => {
    const deactivate = await t.scim('PATCH', `/Users/${adminId}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    })
    expectScimError(deactivate, 403)
    expectScimError(await t.scim('DELETE', `/Users/${adminId}`), 403)
  })
  // A deleted user leaves the list; its address is free.
  const user = await create(t, 'gone@example.com')
  assert.equal((await t.scim('DELETE', `/Users/${user.id}`)).status, 204)
  const list = await t.scim('GET', '/Users')
  assert.deepEqual(
    list.body.Resources.map((u: { id: string }) => u.id),
    [adminId],
  )
  assert.ok((await userRow(server, t.tenantId, user.id))?.deletedAt)
})

test('uniqueness race: a create and a rename to one address at once give one 2xx and one 409 uniqueness, never a 500', async () => {
  const t = await scimTenant(server)
  for (let round = 0; round < 10; round++) {
    const user = await create(t, `racer-${round}@example.com`)
    const address = `contested-${round}@example.com`
    const [renamed, created] = await Promise.all([
      t.scim('PATCH', `/Users/${user.id}`, {
        schemas: [PATCH_SCHEMA],
        Operations: [{ op: 'replace', path: 'userName', value: address }],
      }),
      t.scim('POST', '/Users', { schemas: [USER_SCHEMA], userName: address }),
    ])
    const statuses = [renamed.status, created.status].sort()
    assert.ok(
      JSON.stringify(statuses) === '[200,409]' || JSON.stringify(statuses) === '[201,409]',
      `round ${round}: ${statuses} ${JSON.stringify([renamed.body, created.body])}`,
    )
    const loser = renamed.status === 409 ? renamed : created
    expectScimError(loser, 409, 'uniqueness')
  }
})
