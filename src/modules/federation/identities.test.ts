// The identities queries (CONTRACT §19) on the real database, before the account's
// `me/identities` routes call them: an identity is found by its whole key (kind, source,
// subject) in its tenant only; a second link of one key loses; a user lists its own
// identities oldest first and unlinks one by id, never another user's or tenant's.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import {
  deleteUserIdentity,
  findIdentity,
  type IdentityKey,
  insertIdentity,
  listUserIdentities,
  updateIdentityEmail,
} from './identities.ts'

let server: TestServer
let t: TenantFixture
let other: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
})

const at = (seconds: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, seconds))

test('identities: found by the whole key in its own tenant; a second link of one key loses and changes nothing', async () => {
  const user = (await signup(server, t.slug)).user.id as string
  const key: IdentityKey = {
    tenantId: t.tenantId,
    kind: 'idp',
    source: 'https://idp.example',
    subject: 'sub-key',
  }
  const row = { ...key, userId: user, email: 'a@example.com', createdAt: at(0) }
  assert.equal(await insertIdentity(server.deps.db, row), true)
  assert.equal((await findIdentity(server.deps.db, key))?.userId, user)
  for (const elsewhere of [
    { kind: 'sso' as const },
    { source: 'https://other.example' },
    { subject: 'sub-other' },
    { tenantId: other.tenantId },
  ]) {
    assert.equal(await findIdentity(server.deps.db, { ...key, ...elsewhere }), undefined)
  }
  const intruder = (await signup(server, t.slug)).user.id as string
  const before = await tenantSnapshot(server, t.tenantId)
  assert.equal(await insertIdentity(server.deps.db, { ...row, userId: intruder }), false)
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  await updateIdentityEmail(server.deps.db, key, null)
  assert.equal((await findIdentity(server.deps.db, key))?.email, null)
})

test("identities: a user's list is its own, oldest first; it unlinks one by id, never another user's or another tenant's", async () => {
  const user = (await signup(server, t.slug)).user.id as string
  const neighbour = (await signup(server, t.slug)).user.id as string
  const link = (userId: string, kind: 'idp' | 'sso', subject: string, seconds: number) =>
    insertIdentity(server.deps.db, {
      tenantId: t.tenantId,
      kind,
      source: kind === 'idp' ? 'https://idp.example' : crypto.randomUUID(),
      subject,
      userId,
      email: null,
      createdAt: at(seconds),
    })
  await link(user, 'sso', 'later', 20)
  await link(user, 'idp', 'first', 10)
  await link(neighbour, 'idp', 'theirs', 5)
  const listed = await listUserIdentities(server.deps.db, t.tenantId, user)
  assert.deepEqual(
    listed.map((i) => [i.kind, i.subject, i.createdAt.toISOString()]),
    [
      ['idp', 'first', at(10).toISOString()],
      ['sso', 'later', at(20).toISOString()],
    ],
  )
  assert.deepEqual(Object.keys(listed[0]).sort(), [
    'createdAt',
    'email',
    'id',
    'kind',
    'source',
    'subject',
  ])
  const [theirs] = await listUserIdentities(server.deps.db, t.tenantId, neighbour)
  assert.deepEqual(await listUserIdentities(server.deps.db, other.tenantId, user), [])

  const before = await tenantSnapshot(server, t.tenantId)
  assert.equal(await deleteUserIdentity(server.deps.db, t.tenantId, user, theirs.id), false)
  assert.equal(await deleteUserIdentity(server.deps.db, other.tenantId, user, listed[0].id), false)
  assert.equal(
    await deleteUserIdentity(server.deps.db, t.tenantId, user, crypto.randomUUID()),
    false,
  )
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)

  assert.equal(await deleteUserIdentity(server.deps.db, t.tenantId, user, listed[0].id), true)
  assert.equal(await deleteUserIdentity(server.deps.db, t.tenantId, user, listed[0].id), false)
  assert.deepEqual(
    (await listUserIdentities(server.deps.db, t.tenantId, user)).map((i) => i.subject),
    ['later'],
  )
})
