// The sessions users can see and end themselves (CONTRACT §9): GET me/sessions lists the
// live ones newest first, where each was last used from; DELETE me/sessions/{id} ends one,
// the current one acting as logout; the ended session's tokens are refused (§4).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { from, sidOf, UA_FIREFOX_LINUX, UA_SAFARI_IOS } from '../../../test/fixtures/sessions.ts'
import {
  createTenant,
  eventually,
  STRONG_PASSWORD,
  signup,
  startSecondInstance,
  startTestServer,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { refreshTokens } from '../../db/schema.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

const FIELDS = ['createdAt', 'current', 'id', 'ip', 'lastUsedAt', 'userAgent']
const UA_FIREFOX = UA_FIREFOX_LINUX
const UA_SAFARI = UA_SAFARI_IOS

const list = (slug: string, token: string, query = '') =>
  server.request('GET', `/v1/${slug}/me/sessions${query}`, undefined, { token })
const end = (slug: string, token: string, id: string) =>
  server.request('DELETE', `/v1/${slug}/me/sessions/${id}`, undefined, { token })

async function loginFrom(slug: string, email: string, ip: string, userAgent: string) {
  const res = await server.request(
    'POST',
    `/v1/${slug}/auth/login`,
    { email, password: STRONG_PASSWORD },
    from(ip, userAgent),
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { accessToken: string; refreshToken: string }
}

/** A member signed up from one device and signed in from another a second later. */
async function twoDevices() {
  const t = await createTenant(server)
  const signedUp = await server.request(
    'POST',
    `/v1/${t.slug}/auth/signup`,
    { email: `m-${Date.now()}-${Math.random()}@example.com`, password: STRONG_PASSWORD },
    from('10.1.1.1', UA_FIREFOX),
  )
  assert.equal(signedUp.status, 200)
  const email = signedUp.body.user.email as string
  const first = signedUp.body as { accessToken: string; refreshToken: string }
  const firstAt = server.clock.now()
  server.clock.advance(1)
  const second = await loginFrom(t.slug, email, '10.2.2.2', UA_SAFARI)
  return { t, email, userId: signedUp.body.user.id as string, first, firstAt, second }
}

describe('GET me/sessions', () => {
  test('the live sessions, newest first: where each was signed in from, the current marked', async () => {
    const { t, first, firstAt, second } = await twoDevices()
    const res = await list(t.slug, second.accessToken)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body).sort(), ['items', 'nextCursor'])
    assert.equal(res.body.nextCursor, null)
    const [newest, oldest] = res.body.items
    assert.equal(res.body.items.length, 2)
    for (const item of res.body.items) assert.deepEqual(Object.keys(item).sort(), FIELDS)
    assert.deepEqual(newest, {
      id: sidOf(second.accessToken),
      createdAt: server.clock.now().toISOString(),
      lastUsedAt: server.clock.now().toISOString(),
      ip: '10.2.2.2',
      userAgent: UA_SAFARI,
      current: true,
    })
    assert.deepEqual(oldest, {
      id: sidOf(first.accessToken),
      createdAt: firstAt.toISOString(),
      lastUsedAt: firstAt.toISOString(),
      ip: '10.1.1.1',
      userAgent: UA_FIREFOX,
      current: false,
    })
    // Seen from the other session, the marks swap.
    const other = await list(t.slug, first.accessToken)
    assert.deepEqual(
      other.body.items.map((i: { current: boolean }) => i.current),
      [false, true],
    )
  })

  test('a refresh moves lastUsedAt, ip and userAgent to where it came from; createdAt stays', async () => {
    const { t, second } = await twoDevices()
    server.clock.advance(120)
    const refreshed = await server.request(
      'POST',
      `/v1/${t.slug}/auth/refresh`,
      { refreshToken: second.refreshToken },
      from('2001:db8:1::7', 'curl/8.5.0'),
    )
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body))
    const res = await list(t.slug, refreshed.body.accessToken)
    const item = res.body.items.find((i: { current: boolean }) => i.current)
    assert.equal(item.id, sidOf(second.accessToken), 'the same session')
    assert.equal(item.lastUsedAt, server.clock.now().toISOString())
    assert.notEqual(item.createdAt, item.lastUsedAt)
    assert.equal(item.ip, '2001:db8:1::7')
    assert.equal(item.userAgent, 'curl/8.5.0')
    // Stored on the refresh token the rotation made, in its one statement.
    const rows = await server.deps.db
      .select()
      .from(refreshTokens)
      .where(
        and(
          eq(refreshTokens.tenantId, t.tenantId),
          eq(refreshTokens.sessionId, sidOf(second.accessToken)),
        ),
      )
    assert.deepEqual(
      rows.map((r) => [r.ip, r.userAgent, r.usedAt === null]).sort(),
      [
        ['10.2.2.2', UA_SAFARI, false],
        ['2001:db8:1::7', 'curl/8.5.0', true],
      ].sort(),
    )
  })

  test('ended and expired sessions are not listed', async () => {
    const { t, email, first, second } = await twoDevices()
    await server.request('POST', `/v1/${t.slug}/auth/logout`, { refreshToken: first.refreshToken })
    let res = await list(t.slug, second.accessToken)
    assert.deepEqual(
      res.body.items.map((i: { id: string }) => i.id),
      [sidOf(second.accessToken)],
    )
    // 31 days on, the unused session has expired; a new sign-in lists only itself.
    server.clock.advance(31 * 24 * 3600)
    const fresh = await loginFrom(t.slug, email, '10.2.2.2', UA_SAFARI)
    res = await list(t.slug, fresh.accessToken)
    assert.deepEqual(
      res.body.items.map((i: { id: string }) => i.id),
      [sidOf(fresh.accessToken)],
    )
  })

  test('paged like the admin lists: limit, cursor, newest first, every session once', async () => {
    const { t, email, first, second } = await twoDevices()
    const ids = [sidOf(first.accessToken), sidOf(second.accessToken)]
    for (let i = 0; i < 3; i++) {
      server.clock.advance(1)
      ids.push(sidOf((await loginFrom(t.slug, email, `10.3.3.${i + 1}`, UA_FIREFOX)).accessToken))
    }
    const seen: string[] = []
    let cursor: string | null = null
    const sizes: number[] = []
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${cursor}` : ''}`
      const res = await list(t.slug, second.accessToken, query)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      sizes.push(res.body.items.length)
      seen.push(...res.body.items.map((i: { id: string }) => i.id))
      cursor = res.body.nextCursor
    } while (cursor)
    assert.deepEqual(sizes, [2, 2, 1])
    assert.deepEqual(seen, [...ids].reverse())
    const all = await list(t.slug, second.accessToken, '?limit=200')
    assert.equal(all.body.items.length, 5)
    assert.equal(all.body.nextCursor, null)
  })

  test('bad paging: 400 validation, nothing changes', async () => {
    const { t, second } = await twoDevices()
    await unchanged(server, t.tenantId, async () => {
      for (const [query, path] of [
        ['?limit=0', 'querystring.limit'],
        ['?limit=201', 'querystring.limit'],
        ['?limit=two', 'querystring.limit'],
        ['?cursor=', 'querystring.cursor'],
        ['?cursor=not-a-cursor', 'querystring.cursor'],
        [`?cursor=${'a'.repeat(513)}`, 'querystring.cursor'],
        ['?cursor=%00', undefined],
      ] as const) {
        expectValidation(await list(t.slug, second.accessToken, query), path)
      }
    })
  })

  test('needs a user token of this tenant: none, an API key, another tenant’s', async () => {
    const { t, second } = await twoDevices()
    const other = await createTenant(server)
    const key = await insertApiKey(server, t.tenantId)
    await unchanged(server, [t.tenantId, other.tenantId], async () => {
      const none = await server.request('GET', `/v1/${t.slug}/me/sessions`)
      expectError(none, 401, 'token_missing')
      expectError(await list(t.slug, key), 401, 'user_token_required')
      expectError(await list(other.slug, second.accessToken), 401, 'token_invalid')
      const id = sidOf(second.accessToken)
      expectError(await end(t.slug, key, id), 401, 'user_token_required')
      expectError(await end(other.slug, second.accessToken, id), 401, 'token_invalid')
    })
  })
})

/** A second member device pair in an existing tenant. */
async function twoDevicesOf(t: { slug: string }) {
  const u = await signup(server, t.slug)
  server.clock.advance(1)
  const second = await loginFrom(t.slug, u.email, '10.2.2.2', UA_SAFARI)
  return { u, second }
}

describe('DELETE me/sessions/{id}', () => {
  test('ends another of your sessions: its refresh token and access token are refused', async () => {
    const { t, userId, first, second } = await twoDevices()
    const id = sidOf(first.accessToken)
    const mark = await auditMark(server, t.tenantId)
    const res = await end(t.slug, second.accessToken, id)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true })
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.actorType, e.actorId, e.userId, e.metadata]),
      [['SessionRevoked', 'user', userId, userId, { sessionId: id, reason: 'revoked-by-user' }]],
    )
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: first.accessToken,
    })
    expectError(me, 401, 'session_revoked')
    const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: first.refreshToken,
    })
    expectError(refreshed, 401, 'session_revoked')
    // The current session goes on.
    const listed = await list(t.slug, second.accessToken)
    assert.deepEqual(
      listed.body.items.map((i: { id: string }) => i.id),
      [sidOf(second.accessToken)],
    )
    // Ending it again: it is no longer a live session.
    const again = await unchanged(server, t.tenantId, () => end(t.slug, second.accessToken, id))
    expectError(again, 404, 'not_found')
  })

  test('ending the current session acts as logout', async () => {
    const { t, userId, first, second } = await twoDevices()
    const id = sidOf(second.accessToken)
    const mark = await auditMark(server, t.tenantId)
    const res = await end(t.slug, second.accessToken, id)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.actorId, e.metadata]),
      [
        ['SessionRevoked', userId, { sessionId: id, reason: 'logout' }],
        ['UserLogout', userId, { sessionId: id }],
      ],
    )
    expectError(await list(t.slug, second.accessToken), 401, 'session_revoked')
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
        refreshToken: second.refreshToken,
      }),
      401,
      'session_revoked',
    )
    assert.equal((await list(t.slug, first.accessToken)).body.items.length, 1)
  })

  test('another user’s session, one of another tenant, an unknown id: 404 not_found, nothing changes', async () => {
    const a = await twoDevices()
    const b = await twoDevicesOf(a.t)
    const c = await twoDevices()
    await unchanged(server, [a.t.tenantId, c.t.tenantId], async () => {
      for (const id of [
        sidOf(b.second.accessToken),
        sidOf(c.second.accessToken),
        '0190a6c4-7d1e-7a3b-9c2d-0123456789ab',
      ]) {
        expectError(await end(a.t.slug, a.second.accessToken, id), 404, 'not_found')
      }
    })
  })

  test('a malformed id: 400 validation, nothing changes', async () => {
    const { t, second } = await twoDevices()
    const id = sidOf(second.accessToken)
    await unchanged(server, t.tenantId, async () => {
      for (const bad of ['not-a-uuid', `${id}x`, '1', `${id.slice(0, -1)}g`, '%00']) {
        expectValidation(await end(t.slug, second.accessToken, bad))
      }
      // Past Fastify's 100 characters a path parameter matches no route.
      expectError(await end(t.slug, second.accessToken, 'x'.repeat(300)), 404, 'route_not_found')
    })
  })

  test('the ended session’s access token is refused by another instance within 5 s (CONTRACT §4)', async () => {
    const { t, first, second } = await twoDevices()
    const other = await startSecondInstance(server)
    try {
      const me = () =>
        other.request('GET', `/v1/${t.slug}/me`, undefined, { token: first.accessToken })
      assert.equal((await me()).status, 200)
      const res = await end(t.slug, second.accessToken, sidOf(first.accessToken))
      assert.equal(res.status, 200)
      assert.ok(await eventually(async () => (await me()).status === 401, 5000))
      expectError(await me(), 401, 'session_revoked')
    } finally {
      await other.close()
    }
  })
})
