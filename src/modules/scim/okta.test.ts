// Okta's SCIM 2.0 provisioning client (CONTRACT §14), replayed as Okta's "SCIM 2.0 Protocol
// Reference" shows its requests: the userName lookup with startIndex=1&count=100, the
// create, the import listing, the GET before a PUT, the PUT of the whole resource and the
// deactivation by a PATCH without a path. Only the ids (the service makes them) and, where
// said, the password differ from the guide's text.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, sessionRows, unchanged, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  expectScimError,
  LIST_SCHEMA,
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

const OKTA = { 'user-agent': 'Okta SCIM Client 1.0.0' }
// A password the service accepts (CONTRACT §4: at least 12 characters, not a common one).
const PASSWORD = 'okta-synced-Pa55word-2019'

// The guide's create request, as printed (its password "1mz050nq" is 8 characters).
const OKTA_CREATE = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: 'test.user@okta.local',
  name: { givenName: 'Test', familyName: 'User' },
  emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
  displayName: 'Test User',
  locale: 'en-US',
  externalId: '00ujl29u0le5T6Aj10h7',
  groups: [],
  password: '1mz050nq',
  active: true,
}

test("Okta's provisioning sequence: lookup, create, import, GET, PUT, deactivate by PATCH", async () => {
  const lookup = '/Users?filter=userName%20eq%20%22test.user%40okta.local%22&startIndex=1&count=100'

  // 1. Does the user exist? Not yet: an empty ListResponse.
  const none = await t.scim('GET', lookup, undefined, { headers: OKTA })
  assert.equal(none.status, 200)
  assert.deepEqual(none.body, {
    schemas: [LIST_SCHEMA],
    totalResults: 0,
    startIndex: 1,
    itemsPerPage: 0,
    Resources: [],
  })

  // 2. Create. The guide's 8-character password is under §4's rules: refused, nothing made.
  const weak = await unchanged(server, t.tenantId, () =>
    t.scim('POST', '/Users', OKTA_CREATE, { headers: OKTA }),
  )
  expectScimError(weak, 400, 'invalidValue')
  assert.match(weak.body.detail, /password/)

  const mark = await auditMark(server, t.tenantId)
  const created = await t.scim(
    'POST',
    '/Users',
    { ...OKTA_CREATE, password: PASSWORD },
    {
      headers: OKTA,
    },
  )
  assert.equal(created.status, 201, JSON.stringify(created.body))
  assert.match(created.headers.get('content-type') ?? '', /^application\/scim\+json/)
  const id = created.body.id as string
  assert.equal(created.headers.get('location'), `${t.base}/Users/${id}`)
  assert.equal(created.headers.get('etag'), created.body.meta.version)
  assert.match(created.body.meta.version, /^W\/"[^"]+"$/)
  assert.deepEqual(
    { ...created.body, id: undefined, meta: undefined },
    {
      schemas: [USER_SCHEMA],
      id: undefined,
      externalId: '00ujl29u0le5T6Aj10h7',
      userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      displayName: 'Test User',
      emails: [{ value: 'test.user@okta.local', type: 'work', primary: true }],
      active: true,
      meta: undefined,
    },
  )
  assert.equal(created.body.meta.resourceType, 'User')
  assert.equal(created.body.meta.location, `${t.base}/Users/${id}`)
  assert.ok(!JSON.stringify(created.body).includes(PASSWORD), 'the password is never answered')

  const row = await userByEmail(server, t.tenantId, 'test.user@okta.local')
  assert.equal(row?.id, id)
  assert.equal(row?.status, 'Active')
  assert.equal(row?.role, 'Member')
  assert.equal(row?.externalId, '00ujl29u0le5T6Aj10h7')
  const [provisioned] = await auditSince(server, t.tenantId, mark)
  assert.equal(provisioned.action, 'UserProvisioned')
  assert.equal(provisioned.userId, id)
  assert.equal(provisioned.actorType, 'apiKey')
  assert.equal((provisioned.metadata as { via: string }).via, 'scim')

  // The synced password signs in (hashed under §4, like any other).
  const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: 'test.user@okta.local',
    password: PASSWORD,
  })
  assert.equal(login.status, 200, JSON.stringify(login.body))

  // A second create of the same userName: 409 uniqueness.
  const again = await unchanged(server, t.tenantId, () =>
    t.scim('POST', '/Users', { ...OKTA_CREATE, password: PASSWORD }, { headers: OKTA }),
  )
  expectScimError(again, 409, 'uniqueness')

  // The lookup now finds it.
  const found = await t.scim('GET', lookup, undefined, { headers: OKTA })
  assert.equal(found.body.totalResults, 1)
  assert.equal(found.body.Resources[0].id, id)

  // 3. Import: every user of the tenant, page by page of 100 (the admin and this user).
  const imported = await t.scim('GET', '/Users?startIndex=1&count=100', undefined, {
    headers: OKTA,
  })
  assert.equal(imported.status, 200)
  assert.equal(imported.body.totalResults, 2)
  assert.deepEqual(
    imported.body.Resources.map((u: { userName: string }) => u.userName),
    [t.adminEmail, 'test.user@okta.local'],
  )

  // 4. Update: GET the user, then PUT the whole resource back with the change.
  const current = await t.scim('GET', `/Users/${id}`, undefined, { headers: OKTA })
  assert.equal(current.status, 200)
  assert.equal(current.headers.get('etag'), current.body.meta.version)
  const put = await t.scim(
    'PUT',
    `/Users/${id}`,
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      id,
      userName: 'test.user@okta.local',
      name: { givenName: 'Another', middleName: 'Excited', familyName: 'User' },
      emails: [
        {
          primary: true,
          value: 'test.user@okta.local',
          type: 'work',
          display: 'test.user@okta.local',
        },
      ],
      active: true,
      groups: [],
      meta: { resourceType: 'User' },
    },
    { headers: OKTA },
  )
  assert.equal(put.status, 200, JSON.stringify(put.body))
  assert.deepEqual(put.body.name, { givenName: 'Another', familyName: 'User' })
  // A PUT replaces: what the body leaves out (displayName, externalId) is cleared.
  assert.equal(put.body.displayName, undefined)
  assert.equal(put.body.externalId, undefined)
  assert.notEqual(put.body.meta.version, current.body.meta.version)

  // 5. Deactivate: a PATCH without a path. The user is suspended and its sessions end.
  assert.equal((await sessionRows(server, t.tenantId, id)).filter((s) => !s.revokedAt).length, 1)
  const patchMark = await auditMark(server, t.tenantId)
  const deactivated = await t.scim(
    'PATCH',
    `/Users/${id}`,
    {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    },
    { headers: OKTA },
  )
  assert.equal(deactivated.status, 200, JSON.stringify(deactivated.body))
  assert.equal(deactivated.body.active, false)
  assert.equal((await userByEmail(server, t.tenantId, 'test.user@okta.local'))?.status, 'Suspended')
  assert.equal((await sessionRows(server, t.tenantId, id)).filter((s) => !s.revokedAt).length, 0)
  const refresh = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
    refreshToken: login.body.refreshToken,
  })
  assert.equal(refresh.status, 401)
  const suspended = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: 'test.user@okta.local',
    password: PASSWORD,
  })
  expectError(suspended, 401, 'account_suspended')
  const events = (await auditSince(server, t.tenantId, patchMark)).filter(
    (e) => e.action === 'UserUpdated',
  )
  assert.equal(events.length, 1)
  assert.deepEqual(events[0].metadata, {
    fields: ['status'],
    changes: { status: { from: 'Active', to: 'Suspended' } },
    via: 'scim',
  })

  // The filter on active sees it.
  const inactive = await t.scim('GET', '/Users?filter=active%20eq%20false')
  assert.deepEqual(
    inactive.body.Resources.map((u: { id: string }) => u.id),
    [id],
  )
  // Reactivation (Okta sends the same PATCH with active true).
  const reactivated = await t.scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', value: { active: true } }],
  })
  assert.equal(reactivated.body.active, true)
  assert.equal((await userByEmail(server, t.tenantId, 'test.user@okta.local'))?.status, 'Active')
})
