// Microsoft Entra ID's provisioning client (CONTRACT §14), replayed as Microsoft's
// "Tutorial: Develop and plan provisioning for a SCIM endpoint" prints its user requests:
// create, get, get by query (found and zero results), the multi-valued and single-valued
// "Replace" PATCHes, disable, delete; and the `"value": "False"` string form of disable
// that Entra ID sends to apps without its SCIM 2.0 compliance flag. Only the ids (the
// service makes them) differ from the tutorial's text.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, userByEmail, userRow } from '../../../test/db.ts'
import {
  expectScimError,
  PATCH_SCHEMA,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import { signup, startTestServer, type TestServer } from '../../../test/helpers.ts'

let server: TestServer
let t: ScimTenant
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await scimTenant(server)
})

const ENTRA_CREATE = {
  schemas: [
    'urn:ietf:params:scim:schemas:core:2.0:User',
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  ],
  externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
  userName: 'Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee',
  active: true,
  emails: [
    {
      primary: true,
      type: 'work',
      value: 'Test_User_11bb11bb-cc22-dd33-ee44-55ff55ff55ff@testuser.com',
    },
  ],
  meta: { resourceType: 'User' },
  name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
  roles: [],
}
const EMAIL = 'Test_User_11bb11bb-cc22-dd33-ee44-55ff55ff55ff@testuser.com'

test("Entra ID's provisioning sequence: create, get, query, Replace PATCHes, disable, delete", async () => {
  // Create. userName is not an address here, so the primary email is the user's email
  // (and, so, its userName: the service keeps one address).
  const mark = await auditMark(server, t.tenantId)
  const created = await t.scim('POST', '/Users', ENTRA_CREATE)
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.id as string
  assert.equal(created.headers.get('location'), `${t.base}/Users/${id}`)
  assert.equal(created.body.userName, EMAIL)
  assert.equal(created.body.externalId, '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef')
  assert.deepEqual(created.body.name, { givenName: 'givenName', familyName: 'familyName' })
  assert.deepEqual(created.body.emails, [{ value: EMAIL, type: 'work', primary: true }])
  assert.equal(created.body.active, true)
  assert.deepEqual(
    (await auditSince(server, t.tenantId, mark)).map((e) => [e.action, e.metadata]),
    [['UserProvisioned', { via: 'scim', active: true }]],
  )

  // Get User.
  const got = await t.scim('GET', `/Users/${id}`)
  assert.equal(got.status, 200)
  assert.deepEqual(got.body, created.body)
  // Get User, not found: 404 with SCIM's error schema.
  expectScimError(await t.scim('GET', '/Users/5171a35d82074e068ce2'), 404)

  // Get User by query: Entra ID asks by its userName, which this service keeps only when
  // it is an address, and by the work email; the address finds the user.
  const byName = await t.scim('GET', `/Users?filter=userName eq "${EMAIL}"`)
  assert.equal(byName.status, 200)
  assert.equal(byName.body.totalResults, 1)
  assert.equal(byName.body.Resources[0].id, id)
  const byEmail = await t.scim('GET', `/Users?filter=emails[type eq "work"].value eq "${EMAIL}"`)
  expectScimError(byEmail, 400, 'invalidFilter')
  const byValue = await t.scim('GET', `/Users?filter=emails.value eq "${EMAIL.toUpperCase()}"`)
  assert.equal(byValue.body.totalResults, 1, 'emails.value is not case-exact')
  const byUpn = await t.scim(
    'GET',
    '/Users?filter=userName eq "Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee"',
  )
  assert.equal(byUpn.body.totalResults, 0)
  const byExternalId = await t.scim(
    'GET',
    '/Users?filter=externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"',
  )
  assert.equal(byExternalId.body.Resources[0].id, id)

  // Get User by query - Zero results.
  const zero = await t.scim('GET', '/Users?filter=userName eq "non-existent user"')
  assert.equal(zero.status, 200)
  assert.equal(zero.body.totalResults, 0)
  assert.deepEqual(zero.body.Resources, [])

  // Update User [Multi-valued properties]: "Replace" on a value path and a sub-attribute.
  const updateMark = await auditMark(server, t.tenantId)
  const multi = await t.scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
      { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
    ],
  })
  assert.equal(multi.status, 200, JSON.stringify(multi.body))
  assert.deepEqual(multi.body.emails, [
    { value: 'updatedEmail@microsoft.com', type: 'work', primary: true },
  ])
  assert.equal(multi.body.userName, 'updatedEmail@microsoft.com', 'the email is the userName')
  assert.equal(multi.body.name.familyName, 'updatedFamilyName')
  const row = await userRow(server, t.tenantId, id)
  assert.equal(row?.emailNormalized, 'updatedemail@microsoft.com')
  assert.equal(row?.familyName, 'updatedFamilyName')
  assert.equal(row?.emailVerified, false, 'a new address is unproven')
  assert.deepEqual(
    (await auditSince(server, t.tenantId, updateMark)).map((e) => e.metadata),
    [{ fields: ['email', 'familyName'], changes: {}, via: 'scim' }],
  )

  // Update User [Single-valued properties]: a new userName is a new email.
  const single = await t.scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [
      {
        op: 'Replace',
        path: 'userName',
        value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com',
      },
    ],
  })
  assert.equal(single.status, 200, JSON.stringify(single.body))
  assert.equal(single.body.userName, '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com')
  assert.equal(single.body.emails[0].value, '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com')

  // A userName another user holds: 409 uniqueness, nothing changed.
  const other = await signup(server, t.slug)
  const clash = await t.scim('PATCH', `/Users/${id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'Replace', path: 'userName', value: other.email }],
  })
  expectScimError(clash, 409, 'uniqueness')

  // Disable User (the tutorial's boolean form).
  const disabled = await t.scim('PATCH', `/Users/${id}`, {
    Operations: [{ op: 'Replace', path: 'active', value: false }],
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  })
  assert.equal(disabled.status, 200, JSON.stringify(disabled.body))
  assert.equal(disabled.body.active, false)
  assert.equal((await userRow(server, t.tenantId, id))?.status, 'Suspended')

  // Entra ID without the compliance flag sends booleans as "True"/"False" strings.
  const enabled = await t.scim('PATCH', `/Users/${id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'Replace', path: 'active', value: 'True' }],
  })
  assert.equal(enabled.body.active, true)
  assert.equal((await userRow(server, t.tenantId, id))?.status, 'Active')
  const disabledAgain = await t.scim('PATCH', `/Users/${id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
  })
  assert.equal(disabledAgain.status, 200, JSON.stringify(disabledAgain.body))
  assert.equal(disabledAgain.body.active, false)
  assert.equal((await userRow(server, t.tenantId, id))?.status, 'Suspended')

  // Delete User: 204, then the user is gone (404), soft-deleted as the admin route does.
  const deleteMark = await auditMark(server, t.tenantId)
  const deleted = await t.scim('DELETE', `/Users/${id}`)
  assert.equal(deleted.status, 204)
  assert.equal(deleted.body, '')
  expectScimError(await t.scim('GET', `/Users/${id}`), 404)
  expectScimError(await t.scim('DELETE', `/Users/${id}`), 404)
  assert.ok((await userRow(server, t.tenantId, id))?.deletedAt, 'soft-deleted')
  const [event] = await auditSince(server, t.tenantId, deleteMark)
  assert.equal(event.action, 'UserDeprovisioned')
  assert.equal(event.userId, id)
  assert.deepEqual(event.metadata, { by: 'admin', via: 'scim', sessionsEnded: 0 })
  // The address is free again: Entra ID may provision it anew.
  const again = await t.scim('POST', '/Users', ENTRA_CREATE)
  assert.equal(again.status, 201)
  assert.notEqual(again.body.id, id)
  assert.equal((await userByEmail(server, t.tenantId, EMAIL))?.id, again.body.id)
})

test('Entra ID: PATCH of the enterprise extension or an attribute the service does not keep is 400 invalidPath', async () => {
  const created = await t.scim('POST', '/Users', {
    schemas: [USER_SCHEMA],
    userName: 'entra-extension@example.com',
  })
  for (const path of [
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber',
    'title',
    'phoneNumbers[type eq "mobile"].value',
    'addresses[type eq "work"].formatted',
  ]) {
    const res = await t.scim('PATCH', `/Users/${created.body.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: 'Add', path, value: '1' }],
    })
    expectScimError(res, 400, 'invalidPath')
  }
})

// The tutorial's group requests (its "Group Operations"), the members' ids the service's.
test("Entra ID's group sequence: create, get and query without members, Replace displayName, Add and Remove members, delete", async () => {
  const memberIds: string[] = []
  for (const n of [1, 2]) {
    const res = await t.scim('POST', '/Users', {
      schemas: [USER_SCHEMA],
      userName: `entra-member-${n}-${Date.now()}@testuser.com`,
      active: true,
    })
    assert.equal(res.status, 201)
    memberIds.push(res.body.id)
  }
  const created = await t.scim('POST', '/Groups', {
    schemas: [
      'urn:ietf:params:scim:schemas:core:2.0:Group',
      'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group',
    ],
    externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
    displayName: 'displayName',
    meta: { resourceType: 'Group' },
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.id as string
  assert.deepEqual(created.body.members, [])
  const got = await t.scim('GET', `/Groups/${id}?excludedAttributes=members`)
  assert.equal(got.body.externalId, '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159')
  assert.ok(!('members' in got.body))
  const query = await t.scim(
    'GET',
    `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "displayName"')}`,
  )
  assert.equal(query.body.totalResults, 1)
  assert.equal(query.body.Resources[0].id, id)

  const renamed = await t.scim('PATCH', `/Groups/${id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [
      {
        op: 'Replace',
        path: 'displayName',
        value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName',
      },
    ],
  })
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body))
  assert.equal(renamed.body.displayName, '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName')
  const added = await t.scim('PATCH', `/Groups/${id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [
      {
        op: 'Add',
        path: 'members',
        value: memberIds.map((value) => ({ $ref: null, value })),
      },
    ],
  })
  assert.equal(added.status, 200, JSON.stringify(added.body))
  assert.deepEqual(
    added.body.members.map((m: { value: string }) => m.value).sort(),
    [...memberIds].sort(),
  )
  const removed = await t.scim('PATCH', `/Groups/${id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: memberIds[0] }] }],
  })
  assert.deepEqual(
    removed.body.members.map((m: { value: string }) => m.value),
    [memberIds[1]],
  )
  assert.equal((await t.scim('DELETE', `/Groups/${id}`)).status, 204)
  expectScimError(await t.scim('GET', `/Groups/${id}`), 404)
})
