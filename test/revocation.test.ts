// CONTRACT §4: revocation reaches access tokens within 5 seconds on every instance.
// Two instances share the database (and Redis when REDIS_URL is set); each revocation is
// made on the first and must be refused by the second: through the database's feed on
// PGlite, through the Redis broadcast when REDIS_URL is set.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  createTenant,
  eventually,
  STRONG_PASSWORD,
  signup,
  startSecondInstance,
  startServer,
  type TestServer,
} from './helpers.ts'

// A bcrypt hash of some password (the import test fixtures'): only its replacing counts.
const IMPORTED_BCRYPT = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'

let a: TestServer
let b: Awaited<ReturnType<typeof startSecondInstance>>
let slug: string
let adminToken: string

before(async () => {
  a = await startServer()
  // With Redis, the second instance reads the database's revocation feed only once a
  // minute, so the broadcast alone must bring it each revocation within 5 s.
  b = await startSecondInstance(a, process.env.REDIS_URL ? { revocationPollMs: 60_000 } : {})
  const tenant = await createTenant(a)
  slug = tenant.slug
  adminToken = tenant.admin.accessToken
})
after(async () => {
  await b.close()
  await a.close()
})

const meOn = (server: { request: TestServer['request'] }, token: string) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })

async function refusedOnSecond(token: string): Promise<void> {
  const refused = await eventually(async () => (await meOn(b, token)).status === 401, 5000)
  assert.ok(refused, 'the second instance still accepts a revoked access token after 5 s')
  const res = await meOn(b, token)
  assert.equal(res.body.details.reason, 'session_revoked')
}

describe('revocation reaches every instance within 5 seconds', () => {
  test('logout', async () => {
    const user = await signup(a, slug)
    assert.equal((await meOn(b, user.accessToken)).status, 200)
    await a.request('POST', `/v1/${slug}/auth/logout`, { refreshToken: user.refreshToken })
    await refusedOnSecond(user.accessToken)
  })

  test('logout-all', async () => {
    const user = await signup(a, slug)
    const other = await a.request('POST', `/v1/${slug}/auth/login`, {
      email: user.email,
      password: user.password,
    })
    assert.equal((await meOn(b, other.body.accessToken)).status, 200)
    const res = await a.request('POST', `/v1/${slug}/auth/logout-all`, undefined, {
      token: user.accessToken,
    })
    assert.equal(res.body.count, 2)
    await refusedOnSecond(user.accessToken)
    await refusedOnSecond(other.body.accessToken)
  })

  test('refresh-token family revoked on reuse', async () => {
    const user = await signup(a, slug)
    const rotated = await a.request('POST', `/v1/${slug}/auth/refresh`, {
      refreshToken: user.refreshToken,
    })
    assert.equal(rotated.status, 200)
    assert.equal((await meOn(b, rotated.body.accessToken)).status, 200)
    const reuse = await a.request('POST', `/v1/${slug}/auth/refresh`, {
      refreshToken: user.refreshToken,
    })
    assert.equal(reuse.body.details.reason, 'refresh_token_reused')
    await refusedOnSecond(rotated.body.accessToken)
  })

  test('password change ends the other sessions, not the current one', async () => {
    const user = await signup(a, slug)
    const other = await a.request('POST', `/v1/${slug}/auth/login`, {
      email: user.email,
      password: user.password,
    })
    const res = await a.request(
      'PATCH',
      `/v1/${slug}/me/password`,
      { currentPassword: STRONG_PASSWORD, newPassword: 'violet-harbor-lantern-42' },
      { token: user.accessToken },
    )
    assert.equal(res.status, 200)
    await refusedOnSecond(other.body.accessToken)
    assert.equal((await meOn(b, user.accessToken)).status, 200)
  })

  test('a password replaced by an import update ends every session of the user', async () => {
    const user = await signup(a, slug)
    assert.equal((await meOn(b, user.accessToken)).status, 200)
    const res = await a.request(
      'POST',
      `/v1/${slug}/users/import`,
      {
        users: [{ email: user.email, passwordHash: IMPORTED_BCRYPT }],
        onConflict: 'update',
      },
      { token: adminToken },
    )
    assert.equal(res.body.results[0].status, 'updated', JSON.stringify(res.body))
    await refusedOnSecond(user.accessToken)
  })

  test('account deletion', async () => {
    const user = await signup(a, slug)
    const res = await a.request('DELETE', `/v1/${slug}/me`, undefined, { token: user.accessToken })
    assert.equal(res.status, 200)
    const refused = await eventually(async () => (await meOn(b, user.accessToken)).status === 401)
    assert.ok(refused)
  })
})
