// Authenticating with an API key (SPEC, Authentication, API keys; CONTRACT §4): where a key
// is accepted and refused, revocation and expiry from the next request on, on every
// instance, and lastUsedAt kept without a database write per request.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { oneEvent, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  startSecondInstance,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { apiKeys } from '../../db/schema.ts'
import { hashToken } from '../../lib/crypto.ts'

let server: TestServer
let t: TenantFixture
let admin: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
  // The tests below flush by hand: the 5-second timer must not write in the middle of one.
  await server.deps.apiKeyUsage.stop()
})

async function storedLastUsed(id: string) {
  const rows = await server.deps.db
    .select({ lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, t.tenantId), eq(apiKeys.id, id)))
  return rows[0].lastUsedAt
}

async function listed(id: string) {
  const res = await server.request('GET', `/v1/${t.slug}/api-keys?includeRevoked=true`, undefined, {
    token: admin,
  })
  return res.body.items.find((k: { id: string }) => k.id === id)
}

describe('where a key is accepted (acting as the tenant admin)', () => {
  test('audit, invites, users, GET and PATCH tenant accept a key', async () => {
    const { plaintext } = await createKey(server, t.slug, admin)
    const base = `/v1/${t.slug}`
    for (const url of ['/audit', '/invites', '/users', '/tenant']) {
      const res = await server.request('GET', base + url, undefined, { token: plaintext })
      assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`)
    }
    const patched = await server.request(
      'PATCH',
      `${base}/tenant`,
      { name: 'Renamed by a key' },
      { token: plaintext },
    )
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
  })

  test('a test key works like a live key', async () => {
    const { plaintext } = await createKey(server, t.slug, admin, {
      name: 'staging',
      environment: 'test',
    })
    const res = await server.request('GET', `/v1/${t.slug}/audit`, undefined, { token: plaintext })
    assert.equal(res.status, 200)
  })

  test('changes made with a key are recorded with the key as the actor', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin)
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/invites`,
      { email: uniqueEmail('by-key'), sendEmail: false },
      { token: plaintext, headers: { 'user-agent': 'billing-worker/2.0' }, ip: '10.20.30.40' },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.invite.invitedBy, apiKey.id)
    const event = await oneEvent(
      server,
      t.tenantId,
      'InviteCreated',
      (e) => e.metadata.inviteId === res.body.invite.id,
    )
    assert.equal(event.actorType, 'apiKey')
    assert.equal(event.actorId, apiKey.id)
    assert.equal(event.ip, '10.20.30.40')
    assert.equal(event.userAgent, 'billing-worker/2.0')
  })
})

describe('where a key is refused', () => {
  test('/me, logout-all and mfa need a user token: 401 user_token_required', async () => {
    const { plaintext } = await createKey(server, t.slug, admin)
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url] of [
        ['GET', '/me'],
        ['POST', '/auth/logout-all'],
        ['POST', '/mfa/totp/enroll'],
      ]) {
        const res = await server.request(method, `/v1/${t.slug}${url}`, undefined, {
          token: plaintext,
        })
        expectError(res, 401, 'user_token_required')
      }
    })
  })

  test('the api-keys routes: 403 api_key_not_allowed (a key cannot mint keys)', async () => {
    const { plaintext } = await createKey(server, t.slug, admin)
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request(
        'POST',
        `/v1/${t.slug}/api-keys`,
        { name: 'child', environment: 'live' },
        { token: plaintext },
      )
      expectError(res, 403, 'api_key_not_allowed')
    })
  })

  test('an unknown key with a valid prefix: 401 invalid_api_key', async () => {
    for (const token of [`ak_live_${'A'.repeat(43)}`, 'ak_test_x', `ak_live_${'b'.repeat(500)}`]) {
      const res = await server.request('GET', `/v1/${t.slug}/audit`, undefined, { token })
      expectError(res, 401, 'invalid_api_key')
    }
  })

  test('a key of another tenant is unknown here: 401 invalid_api_key, nothing changes', async () => {
    const other = await createTenant(server)
    const foreign = await createKey(server, other.slug, other.admin.accessToken)
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url, body] of [
        ['GET', '/audit', undefined],
        ['GET', '/invites', undefined],
        ['POST', '/invites', { email: uniqueEmail(), sendEmail: false }],
        ['PATCH', '/tenant', { name: 'Taken over' }],
      ] as const) {
        const res = await server.request(method, `/v1/${t.slug}${url}`, body, {
          token: foreign.plaintext,
        })
        expectError(res, 401, 'invalid_api_key')
      }
    })
  })
})

/** Whether an instance keeps the key in process (apikeys/cache.ts: only with Redis). */
function kept(deps: TestServer['deps'], plaintext: string) {
  return deps.apiKeys.peek(t.tenantId, hashToken(plaintext)) !== undefined
}

describe('revocation and expiry', () => {
  test('a revoked key is refused on the next request, on this and on another instance', async () => {
    const second = await startSecondInstance(server)
    try {
      const { plaintext, apiKey } = await createKey(server, t.slug, admin)
      const url = `/v1/${t.slug}/audit?limit=1`
      // Both instances have served the key before the revocation, and with Redis both keep
      // it in process: the refusal below is the epoch's work, not a fresh read by chance.
      assert.equal((await server.request('GET', url, undefined, { token: plaintext })).status, 200)
      assert.equal((await second.request('GET', url, undefined, { token: plaintext })).status, 200)
      assert.equal(kept(server.deps, plaintext), server.deps.redis !== undefined)
      assert.equal(kept(second.deps, plaintext), server.deps.redis !== undefined)
      const del = await server.request('DELETE', `/v1/${t.slug}/api-keys/${apiKey.id}`, undefined, {
        token: admin,
      })
      assert.equal(del.status, 200)
      expectError(
        await second.request('GET', url, undefined, { token: plaintext }),
        401,
        'invalid_api_key',
      )
      expectError(
        await server.request('GET', url, undefined, { token: plaintext }),
        401,
        'invalid_api_key',
      )
    } finally {
      await second.close()
    }
  })

  test('a key revoked through the second instance is refused on the next request on the first', async () => {
    const second = await startSecondInstance(server)
    try {
      const { plaintext, apiKey } = await createKey(server, t.slug, admin)
      const other = await createKey(server, t.slug, admin)
      const url = `/v1/${t.slug}/users?limit=1`
      for (const token of [plaintext, other.plaintext]) {
        assert.equal((await server.request('GET', url, undefined, { token })).status, 200)
      }
      assert.equal(kept(server.deps, plaintext), server.deps.redis !== undefined)
      const del = await second.request('DELETE', `/v1/${t.slug}/api-keys/${apiKey.id}`, undefined, {
        token: admin,
      })
      assert.equal(del.status, 200)
      await unchanged(server, t.tenantId, async () => {
        expectError(
          await server.request('GET', url, undefined, { token: plaintext }),
          401,
          'invalid_api_key',
        )
      })
      // The tenant's other key, kept under the epoch the revocation moved on, is read again
      // and still accepted.
      assert.equal(
        (await server.request('GET', url, undefined, { token: other.plaintext })).status,
        200,
      )
      assert.equal(
        (await second.request('GET', url, undefined, { token: other.plaintext })).status,
        200,
      )
    } finally {
      await second.close()
    }
  })

  test('an epoch lost in Redis (a flush, a restart) never brings a revoked key back', {
    skip: process.env.REDIS_URL ? false : 'keys are kept in process only with Redis',
  }, async () => {
    const fresh = await createTenant(server)
    const token = fresh.admin.accessToken
    const second = await startSecondInstance(server)
    try {
      const { plaintext, apiKey } = await createKey(server, fresh.slug, token)
      const url = `/v1/${fresh.slug}/audit?limit=1`
      assert.equal((await second.request('GET', url, undefined, { token: plaintext })).status, 200)
      assert.ok(second.deps.apiKeys.peek(fresh.tenantId, hashToken(plaintext)), 'kept')
      const del = await server.request(
        'DELETE',
        `/v1/${fresh.slug}/api-keys/${apiKey.id}`,
        undefined,
        {
          token,
        },
      )
      assert.equal(del.status, 200)
      // The epoch the revocation moved on is lost; the next one read must not be the one
      // the key was kept under.
      await server.deps.redis?.del(`apikeys:epoch:${fresh.tenantId}`)
      expectError(
        await second.request('GET', url, undefined, { token: plaintext }),
        401,
        'invalid_api_key',
      )
    } finally {
      await second.close()
    }
  })

  test('a key is refused from its expiresAt on: 401 invalid_api_key', async () => {
    const expiresAt = new Date(server.clock.now().getTime() + 60_000).toISOString()
    const { plaintext } = await createKey(server, t.slug, admin, {
      name: 'one minute',
      environment: 'live',
      expiresAt,
    })
    const url = `/v1/${t.slug}/audit?limit=1`
    server.clock.advance(59)
    assert.equal((await server.request('GET', url, undefined, { token: plaintext })).status, 200)
    server.clock.advance(1)
    expectError(
      await server.request('GET', url, undefined, { token: plaintext }),
      401,
      'invalid_api_key',
    )
  })
})

describe('lastUsedAt', () => {
  test('is kept in memory per request and written in one batch, not on every request', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin)
    await server.deps.apiKeyUsage.flush()
    const url = `/v1/${t.slug}/audit?limit=1`
    for (let i = 0; i < 3; i++) {
      server.clock.advance(10)
      assert.equal((await server.request('GET', url, undefined, { token: plaintext })).status, 200)
    }
    const lastUse = server.clock.now().toISOString()
    // No write yet, but this instance's list already shows the use.
    assert.equal(await storedLastUsed(apiKey.id), null)
    assert.equal((await listed(apiKey.id)).lastUsedAt, lastUse)

    await server.deps.apiKeyUsage.flush()
    assert.equal((await storedLastUsed(apiKey.id))?.toISOString(), lastUse)
    assert.equal((await listed(apiKey.id)).lastUsedAt, lastUse)
  })

  test('never moves backwards when an older use is written after a newer one', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin)
    const url = `/v1/${t.slug}/audit?limit=1`
    server.clock.advance(100)
    await server.request('GET', url, undefined, { token: plaintext })
    const newest = server.clock.now()
    await server.deps.apiKeyUsage.flush()
    // Another instance's older use arriving late must not win.
    server.deps.apiKeyUsage.touch(t.tenantId, apiKey.id, new Date(newest.getTime() - 50_000))
    await server.deps.apiKeyUsage.flush()
    assert.equal((await storedLastUsed(apiKey.id))?.toISOString(), newest.toISOString())
  })

  test('an instance writes its pending uses when it closes', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin)
    const second = await startSecondInstance(server)
    await second.deps.apiKeyUsage.stop()
    const res = await second.request('GET', `/v1/${t.slug}/audit?limit=1`, undefined, {
      token: plaintext,
    })
    assert.equal(res.status, 200)
    assert.equal(await storedLastUsed(apiKey.id), null)
    await second.close()
    assert.notEqual(await storedLastUsed(apiKey.id), null)
  })

  test('a refused key records no use', async () => {
    const { plaintext, apiKey } = await createKey(server, t.slug, admin, {
      name: 'revoked soon',
      environment: 'live',
    })
    await server.request('DELETE', `/v1/${t.slug}/api-keys/${apiKey.id}`, undefined, {
      token: admin,
    })
    await server.request('GET', `/v1/${t.slug}/audit`, undefined, { token: plaintext })
    await server.deps.apiKeyUsage.flush()
    assert.equal(await storedLastUsed(apiKey.id), null)
    assert.equal((await listed(apiKey.id)).lastUsedAt, null)
  })
})
