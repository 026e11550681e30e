// RFC 7644's example requests on Users, sent as the RFC prints them (its ids and tags
// replaced by the service's), and what this service answers under CONTRACT §14: the
// creation example's userName "bjensen" is no address and it sends no emails (400
// invalidValue); PUT and PATCH with If-Match; the add and replace without a path; the
// filter examples of §3.4.2.2, every one outside the supported grammar 400 invalidFilter.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, unchanged, userRow } from '../../../test/db.ts'
import {
  expectScimError,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import { startTestServer, type TestServer } from '../../../test/helpers.ts'

let server: TestServer
let t: ScimTenant
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await scimTenant(server)
})

// RFC 7644 §3.3.
const RFC_CREATE = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: 'bjensen',
  externalId: 'bjensen',
  name: { formatted: 'Ms. Barbara J Jensen III', familyName: 'Jensen', givenName: 'Barbara' },
}

test('RFC 7644 §3.3: the creation example has no address (userName "bjensen", no emails): 400 invalidValue, nothing created', async () => {
  const res = await unchanged(server, t.tenantId, () => t.scim('POST', '/Users', RFC_CREATE))
  expectScimError(res, 400, 'invalidValue')
})

test('RFC 7644 §3.5.1 PUT and §3.14 If-Match: a stale tag is 412 and changes nothing; the current one replaces', async () => {
  const created = await t.scim('POST', '/Users', { ...RFC_CREATE, userName: 'bjensen@example.com' })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.id
  const put = (ifMatch: string) =>
    t.scim(
      'PUT',
      `/Users/${id}`,
      {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        id,
        userName: 'bjensen',
        externalId: 'bjensen',
        name: {
          formatted: 'Ms. Barbara J Jensen III',
          familyName: 'Jensen',
          givenName: 'Barbara',
          middleName: 'Jane',
        },
        roles: [],
        emails: [{ value: 'bjensen@example.com' }, { value: 'babs@jensen.org' }],
      },
      { headers: { 'if-match': ifMatch } },
    )
  const stale = await unchanged(server, t.tenantId, () => put('W/"a330bc54f0671c9"'))
  expectScimError(stale, 412)

  const replaced = await put(created.body.meta.version)
  assert.equal(replaced.status, 200, JSON.stringify(replaced.body))
  // userName "bjensen" is no address: the first email is the user's address and userName.
  assert.equal(replaced.body.userName, 'bjensen@example.com')
  assert.deepEqual(replaced.body.name, { givenName: 'Barbara', familyName: 'Jensen' })
  assert.equal(replaced.body.externalId, 'bjensen')
})

test('RFC 7644 §3.5.2.1 add and §3.5.2.3 replace without a path: the kept attributes apply, others are ignored', async () => {
  // Its own tenant: the PUT test above holds bjensen@example.com.
  const t = await scimTenant(server)
  const created = await t.scim('POST', '/Users', {
    schemas: [USER_SCHEMA],
    userName: 'babs@example.com',
  })
  const id = created.body.id
  // The RFC's add example, its value object closed (the printed example misses a brace).
  const mark = await auditMark(server, t.tenantId)
  const added = await t.scim(
    'PATCH',
    `/Users/${id}`,
    {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        {
          op: 'add',
          value: { emails: [{ value: 'babs@jensen.org', type: 'home' }], nickname: 'Babs' },
        },
      ],
    },
    { headers: { 'if-match': created.body.meta.version } },
  )
  assert.equal(added.status, 200, JSON.stringify(added.body))
  // A second, non-primary address is not kept: the user has one address.
  assert.equal(added.body.userName, 'babs@example.com')
  assert.equal(added.body.meta.version, created.body.meta.version, 'nothing changed')
  assert.deepEqual(await auditSince(server, t.tenantId, mark), [], 'no change, no event')

  const replaced = await t.scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [
      {
        op: 'replace',
        value: {
          emails: [
            { value: 'bjensen@example.com', type: 'work', primary: true },
            { value: 'babs@jensen.org', type: 'home' },
          ],
          nickname: 'Babs',
        },
      },
    ],
  })
  assert.equal(replaced.status, 200, JSON.stringify(replaced.body))
  assert.equal(replaced.body.userName, 'bjensen@example.com', 'the primary email is the address')
  assert.equal((await userRow(server, t.tenantId, id))?.emailNormalized, 'bjensen@example.com')

  // §3.5.2.3's replace of a work address: addresses are not kept, so the path is invalid.
  const address = await unchanged(server, t.tenantId, () =>
    t.scim('PATCH', `/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        {
          op: 'replace',
          path: 'addresses[type eq "work"].streetAddress',
          value: '1010 Broadway Ave',
        },
      ],
    }),
  )
  expectScimError(address, 400, 'invalidPath')
  // §3.5.2.2's removal by a filter with "ew": outside the value-filter grammar.
  const remove = await unchanged(server, t.tenantId, () =>
    t.scim('PATCH', `/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'remove', path: 'emails[type eq "work" and value ew "example.com"]' }],
    }),
  )
  expectScimError(remove, 400, 'invalidPath')
})

test('RFC 7644 §3.5.2.3: a replace of the complex name, with path "name" and without a path, leaves the sub-attributes it does not name', async () => {
  const t = await scimTenant(server)
  const created = await t.scim('POST', '/Users', {
    schemas: [USER_SCHEMA],
    userName: 'barbara@example.com',
    displayName: 'Babs Jensen',
    externalId: 'bj-1',
    name: { givenName: 'Barbara', familyName: 'Jensen' },
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.id
  const patch = (operation: Record<string, unknown>) =>
    t.scim('PATCH', `/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [operation],
    })
  const withPath = await patch({ op: 'replace', path: 'name', value: { givenName: 'Babs' } })
  assert.equal(withPath.status, 200, JSON.stringify(withPath.body))
  assert.deepEqual(withPath.body.name, { givenName: 'Babs', familyName: 'Jensen' })
  let row = await userRow(server, t.tenantId, id)
  assert.equal(row?.givenName, 'Babs')
  assert.equal(row?.familyName, 'Jensen', 'familyName was not named, so it stays')

  const withoutPath = await patch({ op: 'Replace', value: { name: { familyName: 'Jensen-Lee' } } })
  assert.equal(withoutPath.status, 200, JSON.stringify(withoutPath.body))
  assert.deepEqual(withoutPath.body.name, { givenName: 'Babs', familyName: 'Jensen-Lee' })
  // The core schema's URN as the key (RFC 7644 §3.5.2, Figure 1) is the same operation.
  const urn = await patch({ op: 'replace', value: { [USER_SCHEMA]: { name: { givenName: 'B' } } } })
  assert.equal(urn.status, 200, JSON.stringify(urn.body))
  assert.deepEqual(urn.body.name, { givenName: 'B', familyName: 'Jensen-Lee' })
  row = await userRow(server, t.tenantId, id)
  assert.equal(row?.givenName, 'B')
  assert.equal(row?.familyName, 'Jensen-Lee')
  // Nothing else moved.
  assert.equal(row?.displayName, 'Babs Jensen')
  assert.equal(row?.externalId, 'bj-1')
  assert.equal(row?.emailNormalized, 'barbara@example.com')
})

test('RFC 7644 §3.6 DELETE (with §3.14 If-Match): stale 412, then 204 and the user is 404', async () => {
  const created = await t.scim('POST', '/Users', {
    schemas: [USER_SCHEMA],
    userName: 'delete-me@example.com',
  })
  const id = created.body.id
  const stale = await unchanged(server, t.tenantId, () =>
    t.scim('DELETE', `/Users/${id}`, undefined, { headers: { 'if-match': 'W/"c310cd84f0281b7"' } }),
  )
  expectScimError(stale, 412)
  const deleted = await t.scim('DELETE', `/Users/${id}`, undefined, {
    headers: { 'if-match': created.body.meta.version },
  })
  assert.equal(deleted.status, 204)
  expectScimError(await t.scim('GET', `/Users/${id}`), 404)
})

// RFC 7644 §3.4.2.2's filter examples, but the first (which the grammar takes).
const RFC_FILTERS = [
  'name.familyName co "O\'Malley"',
  'userName sw "J"',
  'urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"',
  'title pr',
  'meta.lastModified gt "2011-05-13T04:42:34Z"',
  'meta.lastModified ge "2011-05-13T04:42:34Z"',
  'meta.lastModified lt "2011-05-13T04:42:34Z"',
  'meta.lastModified le "2011-05-13T04:42:34Z"',
  'title pr and userType eq "Employee"',
  'title pr or userType eq "Intern"',
  'schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"',
  'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
  'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
  'userType eq "Employee" and (emails.type eq "work")',
  'userType eq "Employee" and emails[type eq "work" and value co "@example.com"]',
  'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
]

test('RFC 7644 §3.4.2.2: its filter examples outside the supported grammar are 400 invalidFilter', async () => {
  const ok = await t.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "bjensen"')}`)
  assert.equal(ok.status, 200)
  assert.equal(ok.body.totalResults, 0)
  const urn = await t.scim(
    'GET',
    `/Users?filter=${encodeURIComponent(`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "${t.adminEmail}"`)}`,
  )
  assert.equal(urn.body.totalResults, 1, 'the attribute may carry the schema URN')
  for (const filter of RFC_FILTERS) {
    const res = await t.scim('GET', `/Users?filter=${encodeURIComponent(filter)}`)
    expectScimError(res, 400, 'invalidFilter')
  }
})
