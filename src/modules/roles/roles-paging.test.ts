// GET roles is paged like every list (CONTRACT §2 Lists, §17 Roles): `limit` custom roles a
// page, oldest first, `nextCursor` naming the page's last; the first page also holds the
// built-ins ahead of them, so following nextCursor reads every role exactly once.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { expectValidation } from '../../../test/envelope.ts'
import { createTenant, startTestServer } from '../../../test/helpers.ts'

test('GET roles: the built-ins on the first page, then limit custom roles a page; following nextCursor reads each once; a bad limit or cursor is 400 validation', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const token = tenant.admin.accessToken
  const get = (query: string) =>
    server.request('GET', `/v1/${tenant.slug}/roles${query}`, undefined, { token })
  const names = ['One', 'Two', 'Three', 'Four', 'Five']
  for (const name of names) {
    const res = await server.request('POST', `/v1/${tenant.slug}/roles`, { name }, { token })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }

  const first = await get('?limit=2')
  assert.equal(first.status, 200)
  assert.deepEqual(
    first.body.items.map((r: { name: string; builtIn: boolean }) => [r.name, r.builtIn]),
    [
      ['Admin', true],
      ['Member', true],
      ['One', false],
      ['Two', false],
    ],
  )
  assert.equal(typeof first.body.nextCursor, 'string')
  const seen: string[] = []
  let cursor: string | null = first.body.nextCursor
  while (cursor) {
    const page = await get(`?limit=2&cursor=${encodeURIComponent(cursor)}`)
    assert.equal(page.status, 200)
    assert.ok(page.body.items.length <= 2)
    assert.ok(page.body.items.every((r: { builtIn: boolean }) => !r.builtIn))
    seen.push(...page.body.items.map((r: { name: string }) => r.name))
    cursor = page.body.nextCursor
  }
  assert.deepEqual(seen, ['Three', 'Four', 'Five'])
  // Without a limit: the default (50) holds them all, and no next page.
  const all = await get('')
  assert.equal(all.body.items.length, 7)
  assert.equal(all.body.nextCursor, null)

  for (const query of ['?limit=0', '?limit=201', '?limit=x', '?cursor=nope', '?cursor=']) {
    expectValidation(await get(query))
  }
  // A cursor of another list's shape names no role of this one: 400 too.
  expectValidation(await get(`?cursor=${Buffer.from('c1:Admin').toString('base64url')}`))
})

test("the built-ins' resourceScopes: Admin every scope of every resource, Member those whose roles name Member; GET roles/{name} the same", async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const token = tenant.admin.accessToken
  const post = async (path: string, body: unknown) => {
    const res = await server.request('POST', `/v1/${tenant.slug}${path}`, body, { token })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  await post('/roles', { name: 'Auditor' })
  await post('/api-resources', {
    name: 'Notes',
    identifier: 'https://notes.example.com',
    scopes: [
      { name: 'notes:write' },
      { name: 'notes:admin', roles: ['Admin'] },
      { name: 'notes:audit', roles: ['Auditor'] },
      { name: 'notes:read', roles: ['Member'] },
    ],
  })
  await post('/api-resources', {
    name: 'Reports',
    identifier: 'https://reports.example.com',
    scopes: [{ name: 'reports:admin', roles: ['Admin'] }],
  })
  const admin = [
    {
      resource: 'https://notes.example.com',
      scopes: ['notes:admin', 'notes:audit', 'notes:read', 'notes:write'],
    },
    { resource: 'https://reports.example.com', scopes: ['reports:admin'] },
  ]
  const member = [{ resource: 'https://notes.example.com', scopes: ['notes:read', 'notes:write'] }]
  const list = await server.request('GET', `/v1/${tenant.slug}/roles`, undefined, { token })
  assert.deepEqual(list.body.items[0].resourceScopes, admin)
  assert.deepEqual(list.body.items[1].resourceScopes, member)
  assert.deepEqual(list.body.items[2].resourceScopes, [])
  for (const [name, scopes] of [
    ['Admin', admin],
    ['Member', member],
  ] as const) {
    const one = await server.request('GET', `/v1/${tenant.slug}/roles/${name}`, undefined, {
      token,
    })
    assert.deepEqual(one.body.role.resourceScopes, scopes)
  }
})
