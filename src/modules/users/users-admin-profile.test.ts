// The profile fields of CONTRACT §14 (displayName, givenName, familyName 1..200; externalId
// 1..256): set and cleared by PATCH users/{userId} (admin), answered wherever the user
// record is (PATCH, the users list, /me, the token envelope, the personal-data export), and
// the OpenID provider's `profile` claims.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { auditMark, auditSince, setUser, unchanged, userRow } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { usersAdmin } from '../../../test/fixtures/users.ts'
import { createTenant, startTestServer, type TestServer } from '../../../test/helpers.ts'
import { accountFinder } from '../oidc/account.ts'

let server: TestServer
let h: ReturnType<typeof usersAdmin>
before(async (t) => {
  server = await startTestServer(t)
  h = usersAdmin(server)
})

const PROFILE = {
  displayName: 'Ada Lovelace',
  givenName: 'Ada',
  familyName: 'Lovelace',
  externalId: '00u1ab2cd3EF4gh5i6j7',
}
const CLEARED = { displayName: null, givenName: null, familyName: null, externalId: null }

test('PATCH user: sets each profile field and answers it in PATCH, the list, /me and the sign-in envelope', async () => {
  const { t, admin, member } = await h.setup()
  const fresh = await h.me(t, member.accessToken)
  assert.deepEqual(pick(fresh.body), CLEARED, 'null until set')

  const mark = await auditMark(server, t.tenantId)
  for (const [name, value] of Object.entries(PROFILE)) {
    const res = await h.patch(t, member.user.id, { [name]: value }, admin)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body[name], value)
  }
  const row = await userRow(server, t.tenantId, member.user.id)
  assert.deepEqual(
    {
      displayName: row?.displayName,
      givenName: row?.givenName,
      familyName: row?.familyName,
      externalId: row?.externalId,
    },
    PROFILE,
  )
  // One UserUpdated per change, naming the field and never its value (personal data).
  const events = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'UserUpdated',
  )
  assert.deepEqual(
    events.map((e) => e.metadata),
    Object.keys(PROFILE).map((name) => ({ fields: [name], changes: {} })),
  )
  assert.ok(!JSON.stringify(events).includes('Lovelace'), 'no value in the audit log')

  const me = await h.me(t, member.accessToken)
  assert.deepEqual(pick(me.body), PROFILE)
  const listed = await h.list(t, '', admin)
  const item = listed.body.items.find((u: { id: string }) => u.id === member.user.id)
  assert.deepEqual(pick(item), PROFILE)
  const login = await h.login(t, member.email)
  assert.equal(login.status, 200)
  assert.deepEqual(pick(login.body.user), PROFILE)
})

test('PATCH user: null clears a profile field; the other fields stay', async () => {
  const { t, admin, member } = await h.setup()
  assert.equal((await h.patch(t, member.user.id, PROFILE, admin)).status, 200)
  const mark = await auditMark(server, t.tenantId)
  const res = await h.patch(t, member.user.id, { givenName: null, externalId: null }, admin)
  assert.equal(res.status, 200)
  assert.deepEqual(pick(res.body), { ...PROFILE, givenName: null, externalId: null })
  const [event] = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(event.metadata, { fields: ['givenName', 'externalId'], changes: {} })
  const all = await h.patch(t, member.user.id, CLEARED, admin)
  assert.deepEqual(pick(all.body), CLEARED)
  assert.deepEqual(pick((await h.me(t, member.accessToken)).body), CLEARED)
})

test('PATCH user: profile fields with role in one request, recorded as one UserUpdated', async () => {
  const { t, admin, member } = await h.setup()
  const mark = await auditMark(server, t.tenantId)
  const res = await h.patch(t, member.user.id, { role: 'Admin', displayName: 'Ada' }, admin)
  assert.equal(res.status, 200)
  assert.equal(res.body.role, 'Admin')
  assert.equal(res.body.displayName, 'Ada')
  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => [e.action, e.metadata]),
    [
      [
        'UserUpdated',
        { fields: ['role', 'displayName'], changes: { role: { from: 'Member', to: 'Admin' } } },
      ],
    ],
  )
})

test('PATCH user: a profile field set to the value it holds is no change and records nothing', async () => {
  const { t, admin, member } = await h.setup()
  assert.equal((await h.patch(t, member.user.id, PROFILE, admin)).status, 200)
  const again = await unchanged(server, t.tenantId, () =>
    h.patch(t, member.user.id, { ...PROFILE, givenName: PROFILE.givenName }, admin),
  )
  assert.equal(again.status, 200)
  assert.deepEqual(pick(again.body), PROFILE)
  const clearedTwice = await h.setup()
  const res = await unchanged(server, clearedTwice.t.tenantId, () =>
    h.patch(clearedTwice.t, clearedTwice.member.user.id, CLEARED, clearedTwice.admin),
  )
  assert.deepEqual(pick(res.body), CLEARED)
})

test('PATCH user: the longest profile values are accepted (200 characters, externalId 256)', async () => {
  const { t, admin, member } = await h.setup()
  const longest = {
    displayName: 'd'.repeat(200),
    givenName: 'g'.repeat(200),
    familyName: 'f'.repeat(200),
    externalId: 'e'.repeat(256),
  }
  const res = await h.patch(t, member.user.id, longest, admin)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(pick(res.body), longest)
})

test('PATCH user: externalId need not be unique in a tenant (README, Users)', async () => {
  const { t, admin, member } = await h.setup()
  assert.equal((await h.patch(t, member.user.id, { externalId: 'same' }, admin)).status, 200)
  assert.equal((await h.patch(t, t.admin.user.id, { externalId: 'same' }, admin)).status, 200)
  const list = await h.list(t, '', admin)
  assert.deepEqual(
    list.body.items.map((u: { externalId: string }) => u.externalId),
    ['same', 'same'],
  )
})

test('PATCH user: bad profile values are 400 validation and change nothing', async () => {
  const { t, admin, member } = await h.setup()
  assert.equal((await h.patch(t, member.user.id, PROFILE, admin)).status, 200)
  const bad: [string, unknown][] = []
  for (const name of ['displayName', 'givenName', 'familyName']) {
    bad.push([name, 'x'.repeat(201)], [name, ''])
  }
  bad.push(['externalId', 'x'.repeat(257)], ['externalId', ''])
  for (const name of Object.keys(PROFILE)) {
    bad.push(
      [name, 'Ada\u0000Lovelace'],
      [name, 'Ada\uD800'],
      [name, 42],
      [name, true],
      [name, ['Ada']],
      [name, { value: 'Ada' }],
    )
  }
  for (const [name, value] of bad) {
    const res = await unchanged(server, t.tenantId, () =>
      h.patch(t, member.user.id, { [name]: value }, admin),
    )
    assert.equal(res.status, 400, `${name}: ${JSON.stringify(value)}`)
    expectValidation(res)
  }
  // An unknown property is ignored, never applied (src/plugins/validation.ts).
  const unknown = await unchanged(server, t.tenantId, () =>
    h.patch(t, member.user.id, { nickname: 'Ada', name: 'Ada' }, admin),
  )
  assert.equal(unknown.status, 200)
  assert.deepEqual(pick((await h.me(t, member.accessToken)).body), PROFILE)
})

test('PATCH user: profile fields only by an Admin of the same tenant (Member 403, other tenant 404)', async () => {
  const { t, member } = await h.setup()
  const other = await createTenant(server)
  const byMember = await unchanged(server, t.tenantId, () =>
    h.patch(t, member.user.id, { displayName: 'Mallory' }, member.accessToken),
  )
  expectError(byMember, 403, 'admin_required')
  const ownSelf = await unchanged(server, t.tenantId, () =>
    h.patch(t, t.admin.user.id, { displayName: 'Mallory' }, member.accessToken),
  )
  expectError(ownSelf, 403, 'admin_required')
  // Another tenant's admin, at its own slug, naming this tenant's user: not found there.
  const foreign = await unchanged(server, [t.tenantId, other.tenantId], () =>
    h.patch(other, member.user.id, { displayName: 'Mallory' }, other.admin.accessToken),
  )
  expectError(foreign, 404, 'not_found')
  // ...and at this tenant's slug, its token is not this tenant's.
  const crossed = await unchanged(server, [t.tenantId, other.tenantId], () =>
    h.patch(t, member.user.id, { displayName: 'Mallory' }, other.admin.accessToken),
  )
  assert.equal(crossed.status, 401)
  const none = await unchanged(server, t.tenantId, () =>
    h.patch(t, member.user.id, { displayName: 'Mallory' }),
  )
  assert.equal(none.status, 401)
})

test('export: the personal-data export answers the profile fields', async () => {
  const { t, admin, member } = await h.setup()
  assert.equal((await h.patch(t, member.user.id, PROFILE, admin)).status, 200)
  const res = await server.request('POST', `/v1/${t.slug}/me/export`, undefined, {
    token: member.accessToken,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(pick(res.body.user), PROFILE)
})

test('OpenID profile scope: name, given_name and family_name where known (CONTRACT §11)', async () => {
  const { t, admin, member } = await h.setup()
  const find = accountFinder(server.deps.db, t.tenantId)
  const bare = await find(undefined, member.user.id)
  assert.ok(bare)
  const none = await bare.claims()
  for (const claim of ['name', 'given_name', 'family_name']) {
    assert.equal(claim in none, false, `${claim} left out while unknown`)
  }
  assert.equal(none.sub, member.user.id)
  assert.equal(typeof none.updated_at, 'number')

  assert.equal((await h.patch(t, member.user.id, PROFILE, admin)).status, 200)
  const named = await (await find(undefined, member.user.id))?.claims()
  assert.equal(named?.name, 'Ada Lovelace')
  assert.equal(named?.given_name, 'Ada')
  assert.equal(named?.family_name, 'Lovelace')
  assert.equal('externalId' in (named ?? {}), false)

  await setUser(server, t.tenantId, member.user.id, { displayName: null })
  const partly = await (await find(undefined, member.user.id))?.claims()
  assert.equal(partly && 'name' in partly, false)
  assert.equal(partly?.given_name, 'Ada')
  // Another tenant's finder does not know the user.
  const other = await createTenant(server)
  assert.equal(
    await accountFinder(server.deps.db, other.tenantId)(undefined, member.user.id),
    undefined,
  )
})

/** The profile fields of a user record. */
function pick(user: Record<string, unknown>) {
  return {
    displayName: user.displayName,
    givenName: user.givenName,
    familyName: user.familyName,
    externalId: user.externalId,
  }
}
