// Bad input to SCIM (CONTRACT §14), each refused with the scimType RFC 7644 names and
// nothing changed: filters outside the grammar or shaped to inject (quotes, parentheses,
// `or`, other operators, SQL) are 400 invalidFilter, never a 500, and a quote escaped
// inside the value is only a character of the compared value; PATCH paths the User
// resource does not have are 400 invalidPath; bad values 400 invalidValue.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import {
  expectScimError,
  PATCH_SCHEMA,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import { startTestServer, type TestServer } from '../../../test/helpers.ts'

let server: TestServer
let t: ScimTenant
let userId: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await scimTenant(server)
  const res = await t.scim('POST', '/Users', {
    schemas: [USER_SCHEMA],
    userName: 'target@example.com',
    externalId: 'ext-1',
  })
  userId = res.body.id
})

const list = (filter: string) => t.scim('GET', `/Users?filter=${encodeURIComponent(filter)}`)

const REFUSED_FILTERS = [
  // quotes and injection
  `userName eq 'target@example.com'`,
  'userName eq target@example.com',
  'userName eq "target@example.com',
  'userName eq "target@example.com"" or ""="',
  'userName eq "a" or "1" eq "1"',
  'userName eq "a" or userName pr',
  'userName eq "a" or userName eq "target@example.com"',
  'externalId eq "ext-1" OR active eq true',
  'userName eq "a"; DROP TABLE users; --',
  'userName eq "a" -- comment',
  'userName eq "a" OR 1=1',
  '1=1',
  "' OR '1'='1",
  // parentheses, not, value paths
  '(userName eq "target@example.com")',
  'not (userName eq "a")',
  'emails[value eq "target@example.com"]',
  'emails[type eq "work"].value eq "target@example.com"',
  // operators and attributes outside the grammar
  'userName ne "a"',
  'userName co "target"',
  'userName sw "t"',
  'userName pr',
  'externalId gt "a"',
  'id eq "00000000-0000-0000-0000-000000000000"',
  'displayName eq "a"',
  'password eq "a"',
  'email_normalized eq "target@example.com"',
  // malformed
  '',
  ' ',
  'userName',
  'userName eq',
  'userName eq "a" and',
  'and userName eq "a"',
  'userName eq "a" and and userName eq "b"',
  'userName eq null',
  'userName eq true',
  'active eq "true"',
  'active eq 1',
  'userName eq "\\u0000"',
  'userName eq "\\ud800"',
  'userName eq "bad \\x escape"',
  Array.from({ length: 11 }, () => 'userName eq "a"').join(' and '),
  `userName eq "${'a'.repeat(3000)}"`,
]

test('a filter outside the grammar, or shaped to inject, is 400 invalidFilter and changes nothing', async () => {
  await unchanged(server, t.tenantId, async () => {
    for (const filter of REFUSED_FILTERS) {
      const res = await list(filter)
      expectScimError(res, 400, 'invalidFilter')
    }
    const twice = await t.scim(
      'GET',
      '/Users?filter=userName%20eq%20%22a%22&filter=active%20eq%20true',
    )
    expectScimError(twice, 400, 'invalidFilter')
  })
})

test('a quote escaped inside a filter value is part of the value compared, not SQL: no match', async () => {
  for (const filter of [
    'userName eq "target@example.com\\" or \\"1\\"=\\"1"',
    "externalId eq \"ext-1' OR '1'='1\"",
    'userName eq "x\\"); DELETE FROM users; --"',
  ]) {
    const res = await unchanged(server, t.tenantId, () => list(filter))
    assert.equal(res.status, 200, `${filter}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.totalResults, 0, filter)
  }
})

test('attribute and operator names are case-insensitive; and joins clauses', async () => {
  for (const filter of [
    'userName eq "target@example.com"',
    'USERNAME EQ "TARGET@example.com"',
    'username Eq "target@example.com" AND externalid eq "ext-1"',
    'emails eq "target@example.com" and ACTIVE eq TRUE',
    'externalId eq "ext-1"',
  ]) {
    const res = await list(filter)
    assert.equal(res.status, 200, `${filter}: ${JSON.stringify(res.body)}`)
    assert.deepEqual(
      res.body.Resources.map((u: { id: string }) => u.id),
      [userId],
      filter,
    )
  }
  // externalId is case-exact (RFC 7643 §3.1).
  assert.equal((await list('externalId eq "EXT-1"')).body.totalResults, 0)
  assert.equal(
    (await list('userName eq "target@example.com" and active eq false')).body.totalResults,
    0,
  )
})

test('startIndex and count must be integers (400 invalidValue); out-of-range values are read as RFC 7644 §3.4.2.4 says', async () => {
  await unchanged(server, t.tenantId, async () => {
    for (const query of ['startIndex=abc', 'count=1.5', 'count=ten', 'startIndex=1&startIndex=2']) {
      expectScimError(await t.scim('GET', `/Users?${query}`), 400, 'invalidValue')
    }
  })
  const negative = await t.scim('GET', '/Users?count=-5&startIndex=-3')
  assert.equal(negative.status, 200)
  assert.equal(negative.body.startIndex, 1)
  assert.deepEqual(negative.body.Resources, [])
  assert.equal(negative.body.totalResults, 2)
})

const patch = (operations: unknown[], id = userId) =>
  t.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: operations })

test('a PATCH path the User resource does not have is 400 invalidPath and changes nothing', async () => {
  await unchanged(server, t.tenantId, async () => {
    for (const path of [
      'nickName',
      'name.middleName',
      'emails[type eq "work"].display',
      'emails[type co "w"].value',
      'emails[type eq "work"',
      'emails[].value',
      'userName[type eq "work"]',
      'name[givenName eq "a"]',
      'emails.value.more',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
      'groups2',
      '"userName"',
      'userName or 1=1',
    ]) {
      for (const op of ['add', 'replace', 'remove']) {
        const res = await patch([{ op, path, value: 'x' }])
        expectScimError(res, 400, 'invalidPath')
      }
    }
  })
})

test('PATCH of read-only attributes is 400 mutability; bad operations and values are refused; nothing changes', async () => {
  await unchanged(server, t.tenantId, async () => {
    for (const path of ['id', 'meta', 'meta.created', 'groups']) {
      expectScimError(await patch([{ op: 'replace', path, value: 'x' }]), 400, 'mutability')
    }
    expectScimError(
      await patch([{ op: 'move', path: 'displayName', value: 'x' }]),
      400,
      'invalidSyntax',
    )
    expectScimError(await patch([]), 400, 'invalidSyntax')
    expectScimError(await patch(['replace']), 400, 'invalidSyntax')
    const noOperations = await t.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH_SCHEMA] })
    expectScimError(noOperations, 400, 'invalidSyntax')
    expectScimError(await patch([{ op: 'remove' }]), 400, 'noTarget')
    expectScimError(
      await patch([{ op: 'replace', path: 'emails[type eq "home"].value', value: 'a@b.example' }]),
      400,
      'noTarget',
    )
    for (const [path, value] of [
      ['active', 'yes'],
      ['active', 1],
      ['displayName', 'x'.repeat(201)],
      ['externalId', 42],
      ['externalId', 'x'.repeat(257)],
      ['name.givenName', { a: 1 }],
      ['name', 'Ada'],
      ['userName', 'not-an-address'],
      ['emails', [{ value: 'no-at-sign', primary: true }]],
      ['password', 'short'],
      ['password', 'target@example.com'],
    ] as const) {
      const res = await patch([{ op: 'replace', path, value }])
      if (path === 'userName') {
        // No address: the primary email stays the user's address (CONTRACT §14).
        assert.equal(res.status, 200, JSON.stringify(res.body))
        assert.equal(res.body.userName, 'target@example.com')
        continue
      }
      expectScimError(res, 400, 'invalidValue')
    }
    expectScimError(await patch([{ op: 'replace', value: 'active' }]), 400, 'invalidValue')
    expectScimError(await patch([{ op: 'add', path: 'displayName' }]), 400, 'invalidValue')
  })
})

test('POST and PUT with bad values are 400 invalidValue and change nothing', async () => {
  await unchanged(server, t.tenantId, async () => {
    for (const body of [
      [],
      'userName',
      { schemas: [USER_SCHEMA] },
      { userName: 42 },
      { userName: '' },
      { userName: 'no-address', emails: [{ value: 'also-none' }] },
      { userName: 'new@example.com', emails: 'new@example.com' },
      { userName: 'new@example.com', active: 'maybe' },
      { userName: 'new@example.com', name: 'Ada' },
      { userName: 'new@example.com', displayName: ['Ada'] },
      { userName: 'new@example.com', password: 'new@example.com' },
      { userName: 'new@example.com', password: 'too-short' },
      { userName: 'zero\u200bwidth@example.com' },
    ]) {
      expectScimError(await t.scim('POST', '/Users', body), 400, 'invalidValue')
      expectScimError(await t.scim('PUT', `/Users/${userId}`, body), 400, 'invalidValue')
    }
  })
})
