// An administrator's view of a user's sessions (CONTRACT §9): GET and DELETE
// users/{userId}/sessions with an Admin's token or an API key; the same items as the
// user's own list, never `current`; the ended session's tokens are refused (§4).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditMark, auditSince, setUser, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { from, sidOf, UA_FIREFOX_LINUX } from '../../../test/fixtures/sessions.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

const listOf = (t: TenantFixture, userId: string, token: string, query = '') =>
  server.request('GET', `/v1/${t.slug}/users/${userId}/sessions${query}`, undefined, { token })
const endOf = (t: TenantFixture, userId: string, id: string, token: string) =>
  server.request('DELETE', `/v1/${t.slug}/users/${userId}/sessions/${id}`, undefined, { token })

/** A tenant, its admin's token, an API key, and a member signed in twice. */
async function setup() {
  const t = await createTenant(server)
  const key = await insertApiKey(server, t.tenantId)
  const m = await signup(server, t.slug)
  server.clock.advance(1)
  const second = await server.request(
    'POST',
    `/v1/${t.slug}/auth/login`,
    { email: m.email, password: STRONG_PASSWORD },
    from('10.9.8.7', UA_FIREFOX_LINUX),
  )
  assert.equal(second.status, 200)
  return {
    t,
    admin: t.admin.accessToken as string,
    key,
    member: { id: m.user.id as string, email: m.email, first: m, second: second.body },
  }
}

describe('GET users/{userId}/sessions', () => {
  test('the same items as the user sees, none current; with an Admin token or an API key', async () => {
    const { t, admin, key, member } = await setup()
    const own = await server.request('GET', `/v1/${t.slug}/me/sessions`, undefined, {
      token: member.second.accessToken,
    })
    for (const token of [admin, key]) {
      const res = await listOf(t, member.id, token)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.deepEqual(res.body, {
        items: own.body.items.map((i: object) => ({ ...i, current: false })),
        nextCursor: null,
      })
      assert.deepEqual(
        res.body.items.map((i: { id: string }) => i.id),
        [sidOf(member.second.accessToken), sidOf(member.first.accessToken)],
      )
      assert.equal(res.body.items[0].ip, '10.9.8.7')
    }
    // The admin's own sessions, listed here, are not `current` either.
    const admins = await listOf(t, t.admin.user.id, admin)
    assert.deepEqual(
      admins.body.items.map((i: { current: boolean }) => i.current),
      [false],
    )
  })

  test('paged with limit and cursor', async () => {
    const { t, admin, member } = await setup()
    const first = await listOf(t, member.id, admin, '?limit=1')
    assert.equal(first.body.items.length, 1)
    assert.equal(typeof first.body.nextCursor, 'string')
    const next = await listOf(t, member.id, admin, `?limit=1&cursor=${first.body.nextCursor}`)
    assert.equal(next.body.items.length, 1)
    assert.equal(next.body.nextCursor, null)
    assert.notEqual(next.body.items[0].id, first.body.items[0].id)
    expectValidation(await listOf(t, member.id, admin, '?limit=0'), 'querystring.limit')
    expectValidation(await listOf(t, member.id, admin, '?cursor=zz'), 'querystring.cursor')
  })

  test('an unknown, deleted or other tenant’s user: 404 not_found; a malformed id: 400', async () => {
    const { t, admin, member } = await setup()
    const other = await setup()
    const gone = await signup(server, t.slug)
    await setUser(server, t.tenantId, gone.user.id, { deletedAt: server.clock.now() })
    await unchanged(server, [t.tenantId, other.t.tenantId], async () => {
      for (const userId of [
        '0190a6c4-7d1e-7a3b-9c2d-0123456789ab',
        gone.user.id,
        other.member.id,
      ]) {
        expectError(await listOf(t, userId, admin), 404, 'not_found')
      }
      expectValidation(await listOf(t, 'not-a-uuid', admin), 'params.userId')
      expectValidation(await listOf(t, `${member.id}0`, admin), 'params.userId')
    })
  })

  test('a Member: 403 admin_required; no token: 401; another tenant’s admin: 401', async () => {
    const { t, member } = await setup()
    const other = await setup()
    await unchanged(server, t.tenantId, async () => {
      expectError(await listOf(t, member.id, member.second.accessToken), 403, 'admin_required')
      const none = await server.request('GET', `/v1/${t.slug}/users/${member.id}/sessions`)
      expectError(none, 401, 'token_missing')
      expectError(await listOf(t, member.id, other.admin), 401, 'token_invalid')
      expectError(await listOf(t, member.id, other.key), 401, 'invalid_api_key')
    })
  })
})

describe('DELETE users/{userId}/sessions/{id}', () => {
  test('ends the session: audited, its refresh and access tokens refused, the others go on', async () => {
    const { t, admin, member } = await setup()
    const id = sidOf(member.first.accessToken)
    const mark = await auditMark(server, t.tenantId)
    const res = await endOf(t, member.id, id, admin)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true })
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.actorType, e.actorId, e.userId, e.metadata]),
      [
        [
          'SessionRevoked',
          'user',
          t.admin.user.id,
          member.id,
          { sessionId: id, reason: 'revoked-by-admin' },
        ],
      ],
    )
    const me = (token: string) => server.request('GET', `/v1/${t.slug}/me`, undefined, { token })
    expectError(await me(member.first.accessToken), 401, 'session_revoked')
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
        refreshToken: member.first.refreshToken,
      }),
      401,
      'session_revoked',
    )
    assert.equal((await me(member.second.accessToken)).status, 200)
    const left = await listOf(t, member.id, admin)
    assert.deepEqual(
      left.body.items.map((i: { id: string }) => i.id),
      [sidOf(member.second.accessToken)],
    )
  })

  test('with an API key: audited with the key as the actor', async () => {
    const { t, key, member } = await setup()
    const id = sidOf(member.second.accessToken)
    const mark = await auditMark(server, t.tenantId)
    const res = await endOf(t, member.id, id, key)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const [event] = await auditSince(server, t.tenantId, mark)
    assert.equal(event.action, 'SessionRevoked')
    assert.equal(event.actorType, 'apiKey')
    assert.equal(event.userId, member.id)
  })

  test('a session that is not a live one of this user: 404 not_found, nothing changes', async () => {
    const { t, admin, member } = await setup()
    const other = await setup()
    const ended = sidOf(member.first.accessToken)
    await endOf(t, member.id, ended, admin)
    await unchanged(server, [t.tenantId, other.t.tenantId], async () => {
      const cases: [string, string][] = [
        [member.id, ended], // already ended
        [member.id, sidOf(t.admin.accessToken)], // another user's
        [t.admin.user.id, sidOf(member.second.accessToken)], // named under the wrong user
        [member.id, sidOf(other.member.second.accessToken)], // another tenant's
        [member.id, '0190a6c4-7d1e-7a3b-9c2d-0123456789ab'], // unknown
        ['0190a6c4-7d1e-7a3b-9c2d-0123456789ab', sidOf(member.second.accessToken)], // no such user
        [other.member.id, sidOf(other.member.second.accessToken)], // another tenant's user
      ]
      for (const [userId, id] of cases) {
        expectError(await endOf(t, userId, id, admin), 404, 'not_found')
      }
    })
  })

  test('malformed ids: 400 validation; a Member: 403; nothing changes', async () => {
    const { t, admin, member } = await setup()
    const id = sidOf(member.second.accessToken)
    await unchanged(server, t.tenantId, async () => {
      expectValidation(await endOf(t, member.id, 'nope', admin), 'params.id')
      expectValidation(await endOf(t, 'nope', id, admin), 'params.userId')
      expectValidation(await endOf(t, member.id, `${id}1`, admin), 'params.id')
      expectError(await endOf(t, member.id, id, member.second.accessToken), 403, 'admin_required')
    })
  })
})
