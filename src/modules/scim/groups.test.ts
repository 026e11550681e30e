// SCIM Groups (CONTRACT §17, RFC 7643 §4.2, RFC 7644): the lifecycle a directory drives
// (create, read, list by displayName and externalId, PUT, the PATCH forms of Entra ID and
// Okta, delete), every refusal in SCIM's error form with nothing changed, and another
// tenant's groups and users never reachable.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import {
  expectScimError,
  GROUP_SCHEMA,
  LIST_SCHEMA,
  PATCH_SCHEMA,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import { startTestServer, type TestServer, uniqueEmail } from '../../../test/helpers.ts'

let server: TestServer
let t: ScimTenant
let other: ScimTenant
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await scimTenant(server)
  other = await scimTenant(server)
})

async function scimUser(tenant: ScimTenant, displayName?: string): Promise<string> {
  const res = await tenant.scim('POST', '/Users', {
    schemas: [USER_SCHEMA],
    userName: uniqueEmail('g'),
    ...(displayName ? { displayName } : {}),
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id as string
}

const patch = (...Operations: unknown[]) => ({ schemas: [PATCH_SCHEMA], Operations })
const memberIds = (body: { members?: { value: string }[] }) =>
  (body.members ?? []).map((m) => m.value).sort()

test('a directory creates, reads, lists, replaces, patches and deletes a group', async () => {
  const alice = await scimUser(t, 'Alice')
  const bob = await scimUser(t)
  const carol = await scimUser(t)
  const mark = await auditMark(server, t.tenantId)

  const created = await t.scim('POST', '/Groups', {
    schemas: [GROUP_SCHEMA],
    displayName: 'Engineering',
    externalId: 'eng-1',
    members: [{ value: alice }, { value: bob, display: 'ignored' }],
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.id as string
  assert.match(created.headers.get('content-type') ?? '', /^application\/scim\+json/)
  assert.equal(created.headers.get('location'), `${t.base}/Groups/${id}`)
  assert.equal(created.headers.get('etag'), created.body.meta.version)
  assert.deepEqual(created.body.schemas, [GROUP_SCHEMA])
  assert.equal(created.body.displayName, 'Engineering')
  assert.equal(created.body.externalId, 'eng-1')
  assert.deepEqual(memberIds(created.body), [alice, bob].sort())
  const shownAlice = created.body.members.find((m: { value: string }) => m.value === alice)
  assert.deepEqual(shownAlice, {
    value: alice,
    display: 'Alice',
    $ref: `${t.base}/Users/${alice}`,
    type: 'User',
  })
  assert.equal(created.body.meta.resourceType, 'Group')
  assert.equal(created.body.meta.location, `${t.base}/Groups/${id}`)

  const got = await t.scim('GET', `/Groups/${id}`)
  assert.equal(got.status, 200)
  assert.deepEqual(got.body, created.body)
  const lean = await t.scim('GET', `/Groups/${id}?excludedAttributes=members`)
  assert.equal(lean.status, 200)
  assert.ok(!('members' in lean.body))
  assert.equal(lean.body.displayName, 'Engineering')

  // Filters: displayName ignoring case, externalId exactly; a miss is an empty list.
  const byName = await t.scim(
    'GET',
    `/Groups?filter=${encodeURIComponent('displayName eq "engineering"')}&excludedAttributes=members`,
  )
  assert.equal(byName.status, 200)
  assert.deepEqual(byName.body.schemas, [LIST_SCHEMA])
  assert.equal(byName.body.totalResults, 1)
  assert.equal(byName.body.Resources[0].id, id)
  assert.ok(!('members' in byName.body.Resources[0]))
  const byExternal = await t.scim(
    'GET',
    `/Groups?filter=${encodeURIComponent('externalId eq "eng-1"')}`,
  )
  assert.deepEqual(memberIds(byExternal.body.Resources[0]), [alice, bob].sort())
  const miss = await t.scim('GET', `/Groups?filter=${encodeURIComponent('externalId eq "ENG-1"')}`)
  assert.equal(miss.body.totalResults, 0)
  assert.deepEqual(miss.body.Resources, [])

  // PUT replaces: name, externalId cleared, members.
  const put = await t.scim('PUT', `/Groups/${id}`, {
    schemas: [GROUP_SCHEMA],
    displayName: 'Engineers',
    members: [{ value: bob }, { value: carol }],
  })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  assert.equal(put.body.displayName, 'Engineers')
  assert.ok(!('externalId' in put.body))
  assert.deepEqual(memberIds(put.body), [bob, carol].sort())

  // Entra ID: add a member, remove one by value filter, replace the name (ops in any case).
  const entra = await t.scim(
    'PATCH',
    `/Groups/${id}`,
    patch(
      { op: 'Add', path: 'members', value: [{ value: alice }] },
      { op: 'Remove', path: `members[value eq "${bob}"]` },
      { op: 'Replace', path: 'displayName', value: 'Platform' },
    ),
  )
  assert.equal(entra.status, 200, JSON.stringify(entra.body))
  assert.equal(entra.body.displayName, 'Platform')
  assert.deepEqual(memberIds(entra.body), [alice, carol].sort())

  // Okta: replace the whole list, and the name, without a path; then remove with a value list.
  const okta = await t.scim(
    'PATCH',
    `/Groups/${id}`,
    patch({
      op: 'replace',
      value: { id, displayName: 'Platform Team', members: [{ value: bob }] },
    }),
  )
  assert.equal(okta.status, 200, JSON.stringify(okta.body))
  assert.equal(okta.body.displayName, 'Platform Team')
  assert.deepEqual(memberIds(okta.body), [bob])
  const replaced = await t.scim(
    'PATCH',
    `/Groups/${id}`,
    patch({ op: 'replace', path: 'members', value: [{ value: alice }, { value: carol }] }),
  )
  assert.deepEqual(memberIds(replaced.body), [alice, carol].sort())
  const removed = await t.scim(
    'PATCH',
    `/Groups/${id}`,
    patch({ op: 'remove', path: 'members', value: [{ value: alice }] }),
  )
  assert.deepEqual(memberIds(removed.body), [carol])

  const deleted = await t.scim('DELETE', `/Groups/${id}`)
  assert.equal(deleted.status, 204)
  expectScimError(await t.scim('GET', `/Groups/${id}`), 404)

  const events = await auditSince(server, t.tenantId, mark)
  const groupEvents = events.filter((e) => e.action.startsWith('Group'))
  assert.deepEqual(
    groupEvents.map((e) => e.action),
    ['GroupDeprovisioned', 'GroupProvisioned', ...Array(5).fill('GroupUpdated')],
  )
  for (const e of groupEvents) {
    assert.equal((e.metadata as { via: string }).via, 'scim')
    assert.equal((e.metadata as { groupId: string }).groupId, id)
  }
  const provisioned = groupEvents.find((e) => e.action === 'GroupProvisioned')
  assert.deepEqual(provisioned?.metadata, {
    via: 'scim',
    groupId: id,
    displayName: 'Engineering',
    members: 2,
  })
  // The group holds no roles, so no member's roles changed.
  assert.ok(!events.some((e) => e.action === 'UserRolesChanged'))
})

test('a group refuses, in SCIM errors and changing nothing: an unknown id, a taken displayName, a bad filter, a bad PATCH, a member that is no user of the tenant', async () => {
  const user = await scimUser(t)
  const foreign = await scimUser(other)
  const group = await t.scim('POST', '/Groups', {
    schemas: [GROUP_SCHEMA],
    displayName: 'Sales',
    members: [{ value: user }],
  })
  assert.equal(group.status, 201)
  const id = group.body.id as string
  await t.scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Support' })
  const unknown = '0190a0b0-0000-7000-8000-000000000000'

  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    for (const path of [`/Groups/${unknown}`, '/Groups/not-a-uuid']) {
      expectScimError(await t.scim('GET', path), 404)
      expectScimError(await t.scim('PUT', path, { schemas: [GROUP_SCHEMA], displayName: 'X' }), 404)
      expectScimError(
        await t.scim('PATCH', path, patch({ op: 'replace', path: 'displayName', value: 'X' })),
        404,
      )
      expectScimError(await t.scim('DELETE', path), 404)
    }
    // displayName is unique in the tenant, ignoring case.
    const dup = await t.scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'SALES' })
    expectScimError(dup, 409, 'uniqueness')
    expectScimError(
      await t.scim(
        'PATCH',
        `/Groups/${id}`,
        patch({ op: 'replace', path: 'displayName', value: 'support' }),
      ),
      409,
      'uniqueness',
    )
    expectScimError(
      await t.scim('PUT', `/Groups/${id}`, { schemas: [GROUP_SCHEMA], displayName: 'Support' }),
      409,
      'uniqueness',
    )
    // Filters outside displayName eq / externalId eq.
    for (const filter of [
      'displayName co "Sa"',
      'members.value eq "x"',
      'displayName eq Sales',
      'displayName eq "Sales" or externalId eq "a"',
      'userName eq "a@example.com"',
    ]) {
      expectScimError(
        await t.scim('GET', `/Groups?filter=${encodeURIComponent(filter)}`),
        400,
        'invalidFilter',
      )
    }
    // PATCH paths and values it cannot take.
    const bad: [unknown, number, string | undefined][] = [
      [patch({ op: 'replace', path: 'owner', value: 'x' }), 400, 'invalidPath'],
      [patch({ op: 'add', path: 'members[display eq "x"]', value: [] }), 400, 'invalidPath'],
      [
        patch({ op: 'replace', path: `members[value eq "${user}"]`, value: {} }),
        400,
        'invalidPath',
      ],
      [patch({ op: 'replace', path: 'id', value: unknown }), 400, 'mutability'],
      [patch({ op: 'remove', path: 'displayName' }), 400, 'invalidValue'],
      [patch({ op: 'replace', path: 'displayName', value: 7 }), 400, 'invalidValue'],
      [
        patch({ op: 'add', path: 'members', value: [{ display: 'no value' }] }),
        400,
        'invalidValue',
      ],
      [patch({ op: 'add', path: 'members', value: 'nope' }), 400, 'invalidValue'],
      [patch({ op: 'replace', value: 'not an object' }), 400, 'invalidValue'],
      [patch({ op: 'remove' }), 400, 'noTarget'],
      [patch({ op: 'merge', path: 'displayName', value: 'x' }), 400, 'invalidSyntax'],
      [{ schemas: [PATCH_SCHEMA], Operations: [] }, 400, 'invalidSyntax'],
    ]
    for (const [body, status, scimType] of bad) {
      expectScimError(await t.scim('PATCH', `/Groups/${id}`, body), status, scimType)
    }
    // A member must be a live user of this tenant: another tenant's, an unknown id, no id.
    for (const value of [foreign, unknown, 'not-a-uuid']) {
      expectScimError(
        await t.scim(
          'PATCH',
          `/Groups/${id}`,
          patch({ op: 'add', path: 'members', value: [{ value }] }),
        ),
        400,
        'invalidValue',
      )
      expectScimError(
        await t.scim('POST', '/Groups', {
          schemas: [GROUP_SCHEMA],
          displayName: 'New',
          members: [{ value }],
        }),
        400,
        'invalidValue',
      )
    }
    expectScimError(
      await t.scim('POST', '/Groups', { schemas: [GROUP_SCHEMA] }),
      400,
      'invalidValue',
    )
    expectScimError(
      await t.scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'x'.repeat(257) }),
      400,
      'invalidValue',
    )
    // If-Match with a stale version.
    const stale = await t.scim(
      'PATCH',
      `/Groups/${id}`,
      patch({ op: 'replace', path: 'displayName', value: 'Renamed' }),
      { headers: { 'if-match': 'W/"stale"' } },
    )
    expectScimError(stale, 412)
    expectScimError(
      await t.scim('DELETE', `/Groups/${id}`, undefined, { headers: { 'if-match': 'W/"stale"' } }),
      412,
    )
  })

  // The current version is accepted.
  const ok = await t.scim(
    'PATCH',
    `/Groups/${id}`,
    patch({ op: 'replace', path: 'externalId', value: 'sales-1' }),
    { headers: { 'if-match': group.body.meta.version } },
  )
  assert.equal(ok.status, 200, JSON.stringify(ok.body))
  assert.notEqual(ok.body.meta.version, group.body.meta.version)
})

test("another tenant's key never sees, changes nor deletes a tenant's group", async () => {
  const created = await t.scim('POST', '/Groups', {
    schemas: [GROUP_SCHEMA],
    displayName: 'Private',
  })
  const id = created.body.id as string
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    expectScimError(await other.scim('GET', `/Groups/${id}`), 404)
    expectScimError(
      await other.scim(
        'PATCH',
        `/Groups/${id}`,
        patch({ op: 'replace', path: 'displayName', value: 'x' }),
      ),
      404,
    )
    expectScimError(
      await other.scim('PUT', `/Groups/${id}`, { schemas: [GROUP_SCHEMA], displayName: 'x' }),
      404,
    )
    expectScimError(await other.scim('DELETE', `/Groups/${id}`), 404)
    const list = await other.scim(
      'GET',
      `/Groups?filter=${encodeURIComponent('displayName eq "Private"')}`,
    )
    assert.equal(list.body.totalResults, 0)
    // A key of the tenant on another tenant's SCIM base is refused.
    expectScimError(
      await server.request('GET', `/scim/v2/${other.slug}/Groups`, undefined, { token: t.key }),
      401,
    )
  })
  // The same displayName is free in another tenant.
  const there = await other.scim('POST', '/Groups', {
    schemas: [GROUP_SCHEMA],
    displayName: 'Private',
  })
  assert.equal(there.status, 201)
})

test('GET Groups pages with startIndex and count', async () => {
  const tenant = await scimTenant(server)
  for (const name of ['A', 'B', 'C']) {
    assert.equal(
      (await tenant.scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: name })).status,
      201,
    )
  }
  const page = await tenant.scim('GET', '/Groups?startIndex=2&count=1')
  assert.equal(page.body.totalResults, 3)
  assert.equal(page.body.startIndex, 2)
  assert.equal(page.body.itemsPerPage, 1)
  assert.equal(page.body.Resources[0].displayName, 'B')
  expectScimError(await tenant.scim('GET', '/Groups?count=many'), 400, 'invalidValue')
})
