// GET invites and DELETE invites/{id} (SPEC, Invites and Invite state table; CONTRACT §2
// Invite record and status, Lists, foreign ids 404).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { oneEvent, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { eq } from '../../db/orm.ts'
import { invites } from '../../db/schema.ts'

const RECORD_KEYS = [
  'acceptedAt',
  'createdAt',
  'email',
  'expiresAt',
  'id',
  'invitedBy',
  'revokedAt',
  'role',
  'roles',
  'status',
]

let server: TestServer
let t: TenantFixture
let other: TenantFixture
let admin: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server, { name: 'Acme Rockets' })
  other = await createTenant(server)
  admin = t.admin.accessToken
})

const path = (slug = t.slug) => `/v1/${slug}/invites`

async function invite(body: Record<string, unknown>, token = admin, slug = t.slug) {
  const res = await server.request('POST', path(slug), body, { token })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { token: string; invite: Record<string, any> }
}

async function inviteRow(id: string) {
  const rows = await server.deps.db.select().from(invites).where(eq(invites.id, id))
  return rows[0]
}

async function accept(token: string) {
  return server.request('POST', '/v1/invites/accept', { token, password: 'plum-orbit-canvas-77' })
}

describe('GET invites', () => {
  let fresh: TenantFixture
  const made: Record<string, { token: string; invite: Record<string, any> }> = {}
  before(async () => {
    fresh = await createTenant(server)
    const tok = fresh.admin.accessToken
    for (const name of ['accepted', 'revoked', 'expired', 'pending']) {
      made[name] = await invite(
        { email: uniqueEmail(name), sendEmail: false, ttlSeconds: name === 'expired' ? 60 : 3600 },
        tok,
        fresh.slug,
      )
      server.clock.advance(1)
    }
    assert.equal((await accept(made.accepted.token)).status, 200)
    const del = await server.request(
      'DELETE',
      `${path(fresh.slug)}/${made.revoked.invite.id}`,
      undefined,
      { token: tok },
    )
    assert.equal(del.status, 200)
    server.clock.advance(120)
  })

  async function list(query = '') {
    const res = await server.request('GET', path(fresh.slug) + query, undefined, {
      token: fresh.admin.accessToken,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body as { items: Record<string, any>[]; nextCursor: string | null }
  }

  test('shows pending and expired ones by default, newest first, with their status', async () => {
    const body = await list()
    assert.deepEqual(Object.keys(body).sort(), ['items', 'nextCursor'])
    assert.deepEqual(
      body.items.map((i) => [i.id, i.status]),
      [
        [made.pending.invite.id, 'Pending'],
        [made.expired.invite.id, 'Expired'],
      ],
    )
    for (const item of body.items) assert.deepEqual(Object.keys(item).sort(), RECORD_KEYS)
    assert.equal(body.nextCursor, null)
    const text = JSON.stringify(body)
    for (const m of Object.values(made)) assert.ok(!text.includes(m.token), 'no token listed')
  })

  test('includeAccepted and includeRevoked add those', async () => {
    const statuses = async (q: string) => (await list(q)).items.map((i) => i.status)
    assert.deepEqual(await statuses('?includeAccepted=true'), ['Pending', 'Expired', 'Accepted'])
    assert.deepEqual(await statuses('?includeRevoked=true'), ['Pending', 'Expired', 'Revoked'])
    assert.deepEqual(await statuses('?includeAccepted=true&includeRevoked=true'), [
      'Pending',
      'Expired',
      'Revoked',
      'Accepted',
    ])
    assert.deepEqual(await statuses('?includeAccepted=false&includeRevoked=false'), [
      'Pending',
      'Expired',
    ])
    const accepted = (await list('?includeAccepted=true')).items.find(
      (i) => i.status === 'Accepted',
    )
    assert.ok(accepted?.acceptedAt)
  })

  test('pages with limit and cursor, each invitation once', async () => {
    const all = await list('?includeAccepted=true&includeRevoked=true')
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page = await list(
        `?includeAccepted=true&includeRevoked=true&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      )
      assert.ok(page.items.length <= 1)
      seen.push(...page.items.map((i) => i.id))
      cursor = page.nextCursor
    } while (cursor)
    assert.deepEqual(
      seen,
      all.items.map((i) => i.id),
    )
  })

  test("another tenant's invitations are never listed", async () => {
    const theirs = await list('?includeAccepted=true&includeRevoked=true')
    const mine = await server.request(
      'GET',
      `${path()}?includeAccepted=true&includeRevoked=true&limit=200`,
      undefined,
      {
        token: admin,
      },
    )
    const mineIds = new Set(mine.body.items.map((i: any) => i.id))
    for (const i of theirs.items) assert.ok(!mineIds.has(i.id))
  })

  for (const [query, issue] of [
    ['includeAccepted=perhaps', 'querystring.includeAccepted'],
    ['includeRevoked=2', 'querystring.includeRevoked'],
    ['limit=0', 'querystring.limit'],
    ['limit=201', 'querystring.limit'],
    ['cursor=%%%', 'querystring.cursor'],
  ]) {
    test(`?${query} is a 400`, async () => {
      const res = await server.request('GET', `${path()}?${query}`, undefined, { token: admin })
      expectValidation(res, issue)
    })
  }
})

describe('DELETE invites/{id}', () => {
  test('revokes: InviteRevoked, the token no longer accepted, hidden from the list', async () => {
    const made = await invite({ email: uniqueEmail('revokee'), sendEmail: false })
    const res = await server.request('DELETE', `${path()}/${made.invite.id}`, undefined, {
      token: admin,
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })
    const row = await inviteRow(made.invite.id)
    assert.ok(row.revokedAt)
    const event = await oneEvent(
      server,
      t.tenantId,
      'InviteRevoked',
      (e) => e.metadata.inviteId === made.invite.id,
    )
    assert.equal(event.metadata.inviteId, made.invite.id)
    assert.equal(event.metadata.reason, 'revoked')
    assert.equal(event.actorId, t.admin.user.id)
    await unchanged(server, t.tenantId, async () => {
      expectError(await accept(made.token), 401, 'invalid_invite')
    })
    const list = await server.request('GET', path(), undefined, { token: admin })
    assert.ok(!list.body.items.some((i: any) => i.id === made.invite.id))
  })

  test('an API key can revoke; the actor is the key', async () => {
    const key = await createKey(server, t.slug, admin)
    const made = await invite({ email: uniqueEmail(), sendEmail: false })
    const res = await server.request('DELETE', `${path()}/${made.invite.id}`, undefined, {
      token: key.plaintext,
    })
    assert.equal(res.status, 200)
    const event = await oneEvent(
      server,
      t.tenantId,
      'InviteRevoked',
      (e) => e.metadata.inviteId === made.invite.id,
    )
    assert.equal(event.actorType, 'apiKey')
    assert.equal(event.actorId, key.apiKey.id)
  })

  test('revoking a revoked invitation answers ok and records nothing more', async () => {
    const made = await invite({ email: uniqueEmail(), sendEmail: false })
    const url = `${path()}/${made.invite.id}`
    assert.equal((await server.request('DELETE', url, undefined, { token: admin })).status, 200)
    await unchanged(server, t.tenantId, async () => {
      assert.equal((await server.request('DELETE', url, undefined, { token: admin })).status, 200)
    })
  })

  test('an accepted invitation cannot be revoked: 409 invite_used', async () => {
    const made = await invite({ email: uniqueEmail(), sendEmail: false })
    assert.equal((await accept(made.token)).status, 200)
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request('DELETE', `${path()}/${made.invite.id}`, undefined, {
        token: admin,
      })
      expectError(res, 409, 'invite_used')
    })
  })

  test('an unknown or malformed id is 404 not_found', async () => {
    await unchanged(server, t.tenantId, async () => {
      for (const id of ['00000000-0000-7000-8000-000000000000', 'nope', '42', 'i'.repeat(100)]) {
        const res = await server.request('DELETE', `${path()}/${id}`, undefined, { token: admin })
        expectError(res, 404, 'not_found')
      }
    })
  })

  test("another tenant's invitation is 404 here and stays acceptable", async () => {
    const theirs = await invite(
      { email: uniqueEmail(), sendEmail: false },
      other.admin.accessToken,
      other.slug,
    )
    await unchanged(server, other.tenantId, async () => {
      const res = await server.request('DELETE', `${path()}/${theirs.invite.id}`, undefined, {
        token: admin,
      })
      expectError(res, 404, 'not_found')
    })
    const accepted = await accept(theirs.token)
    assert.equal(accepted.status, 200)
    assert.equal(accepted.body.tenantSlug, other.slug)
  })
})
