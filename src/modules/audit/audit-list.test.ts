// GET audit (SPEC, Events and Administration; CONTRACT §2, Audit event): newest first,
// every filter, keyset pages, search, and who may read it.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import { enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import { registerPasskey } from '../../../test/fixtures/passkeys.ts'
import { member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { sql } from '../../db/orm.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { AuditAction } from './actions.ts'
import type { Actor, AuditEntry } from './recorder.ts'
import { SHORT_SEARCH_WINDOW } from './service.ts'

const ITEM_KEYS = [
  'action',
  'actorId',
  'actorType',
  'createdAt',
  'id',
  'ip',
  'metadata',
  'userAgent',
  'userId',
]

const ACTOR: Actor = { type: 'system', id: null, ip: '192.0.2.7', userAgent: 'audit-test' }

let server: TestServer
let t: TenantFixture
let other: TenantFixture

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
})

type Item = Record<string, any>

/** Records one event a second after the previous one; answers its createdAt. */
async function record(
  tenantId: string,
  action: AuditAction,
  // Any action with any metadata: these tests are about the log, not one action's fields.
  entry: { userId?: string | null; email?: string | null; metadata?: Record<string, unknown> } = {},
  actor: Actor = ACTOR,
) {
  server.clock.advance(1)
  await server.deps.audit.record(server.deps.db, tenantId, actor, [
    { action, ...entry } as AuditEntry,
  ])
  return server.clock.now().toISOString()
}

async function list(fixture: TenantFixture, query = '', token = fixture.admin.accessToken) {
  const res = await server.request('GET', `/v1/${fixture.slug}/audit${query}`, undefined, { token })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { items: Item[]; nextCursor: string | null }
}

/** Every item of a listing, following nextCursor to the end. */
async function listAll(fixture: TenantFixture, query: string) {
  const items: Item[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const sep = query ? '&' : '?'
    const page = await list(fixture, cursor ? `${query}${sep}cursor=${cursor}` : query)
    items.push(...page.items)
    cursor = page.nextCursor
    pages++
  } while (cursor && pages < 100)
  return { items, pages }
}

describe('recording', () => {
  test('one write of several events keeps their order, fields and any characters', async () => {
    const fresh = await createTenant(server)
    const userId = uuidv7()
    const text = 'quote " backslash \\ braces {a,b} comma, apostrophe \' ü € 😀 NULL'
    server.clock.advance(1)
    const actor: Actor = { ...ACTOR, userAgent: `agent ${text}` }
    await server.deps.audit.record(server.deps.db, fresh.tenantId, actor, [
      { action: 'UserUpdated', userId, email: 'first@example.com', metadata: { text } },
      { action: 'UserLoginFailed', email: null, metadata: { nested: { text, list: [text] } } },
      { action: 'SessionCreated', userId },
    ])
    const { items } = await list(fresh)
    // Newest first; the three share one time, so their ids keep the order they were made.
    const mine = items.filter((i) => i.action !== 'TenantCreated' && i.action !== 'UserSignup')
    const ours = mine.slice(0, 3).reverse()
    assert.deepEqual(
      ours.map((i) => [i.action, i.userId, i.metadata]),
      [
        ['UserUpdated', userId, { text }],
        ['UserLoginFailed', null, { nested: { text, list: [text] } }],
        ['SessionCreated', userId, {}],
      ],
    )
    for (const item of ours) {
      assert.equal(item.userAgent, `agent ${text}`)
      assert.equal(item.actorType, ACTOR.type)
      assert.equal(item.createdAt, ours[0].createdAt)
    }
  })
})

describe('GET audit', () => {
  test('lists newest first, each event with exactly the contract fields', async () => {
    const fresh = await createTenant(server)
    const userId = uuidv7()
    await record(fresh.tenantId, 'ApiKeyCreated', { metadata: { apiKeyId: 'k1' } })
    const at = await record(fresh.tenantId, 'UserUpdated', {
      userId,
      email: 'changed@example.com',
      metadata: { role: 'Admin', nested: { list: [1, 2] } },
    })
    const body = await list(fresh)
    assert.deepEqual(Object.keys(body).sort(), ['items', 'nextCursor'])
    assert.equal(body.nextCursor, null)
    const [newest, second] = body.items
    assert.deepEqual(Object.keys(newest).sort(), ITEM_KEYS)
    assert.equal(newest.action, 'UserUpdated')
    assert.equal(newest.actorType, 'system')
    assert.equal(newest.actorId, null)
    assert.equal(newest.userId, userId)
    assert.equal(newest.ip, '192.0.2.7')
    assert.equal(newest.userAgent, 'audit-test')
    assert.deepEqual(newest.metadata, { role: 'Admin', nested: { list: [1, 2] } })
    assert.equal(newest.createdAt, at)
    assert.equal(second.action, 'ApiKeyCreated')
    const times = body.items.map((i) => Date.parse(i.createdAt))
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    )
    // The creation of the tenant is in the log too, with the admin as the actor.
    const created = body.items.find((i) => i.action === 'TenantCreated')
    assert.ok(created)
  })

  test('action filters, including the Passwordless* actions and UserUpdated', async () => {
    const fresh = await createTenant(server)
    for (const action of [
      'PasswordlessCodeSent',
      'MfaEmailOtpSent',
      'PasswordlessCodeFailed',
      'PasswordlessCodeSent',
      'PasswordlessCodeVerified',
      'UserUpdated',
    ] as const) {
      await record(fresh.tenantId, action)
    }
    const count = async (action: string) =>
      (await list(fresh, `?action=${action}`)).items.map((i) => i.action)
    assert.deepEqual(await count('PasswordlessCodeSent'), [
      'PasswordlessCodeSent',
      'PasswordlessCodeSent',
    ])
    assert.deepEqual(await count('PasswordlessCodeFailed'), ['PasswordlessCodeFailed'])
    assert.deepEqual(await count('PasswordlessCodeVerified'), ['PasswordlessCodeVerified'])
    assert.deepEqual(await count('MfaEmailOtpSent'), ['MfaEmailOtpSent'])
    assert.deepEqual(await count('UserUpdated'), ['UserUpdated'])
    assert.deepEqual(await count('InviteExpired'), [])
  })

  test('action filters the account lifecycle actions (CONTRACT §9) the service records, each answering exactly its events', async () => {
    const fresh = await tenantWith(server, { mfaPolicy: 'Optional' })
    const u = await member(server, fresh.slug)
    const at = (path: string) => `/v1/${fresh.slug}/${path}`
    // Each event a second after the previous one: newest first is then a fixed order.
    const step = () => server.clock.advance(1)

    const asked = await server.request('POST', at('auth/request-password-reset'), {
      email: u.email,
    })
    assert.equal(asked.status, 200, JSON.stringify(asked.body))
    step()
    const { secret, recoveryCodes } = await enrolWithRecoveryCodes(
      server,
      fresh.slug,
      u.accessToken,
    )
    for (const recoveryCode of recoveryCodes.slice(0, 2)) {
      step()
      const signedIn = await server.request('POST', at('auth/login'), {
        email: u.email,
        password: STRONG_PASSWORD,
        recoveryCode,
      })
      assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body))
    }
    step()
    const regenerated = await server.request(
      'POST',
      at('mfa/recovery-codes/regenerate'),
      { totpCode: totpAt(server, secret) },
      { token: u.accessToken },
    )
    assert.equal(regenerated.status, 200, JSON.stringify(regenerated.body))
    step()
    const kept = await registerPasskey(server, fresh.slug, u.accessToken)
    step()
    const removed = await registerPasskey(server, fresh.slug, u.accessToken)
    step()
    const gone = await server.request(
      'DELETE',
      at(`me/passkeys/${removed.passkey.id}`),
      undefined,
      {
        token: u.accessToken,
      },
    )
    assert.equal(gone.status, 200, JSON.stringify(gone.body))

    const filtered = async (action: string) =>
      (await list(fresh, `?action=${action}`)).items.map((i) => [i.action, i.userId, i.metadata])
    assert.deepEqual(await filtered('PasswordResetRequested'), [
      ['PasswordResetRequested', u.id, { email: u.email }],
    ])
    assert.deepEqual(await filtered('MfaRecoveryCodeUsed'), [
      ['MfaRecoveryCodeUsed', u.id, { remaining: 8 }],
      ['MfaRecoveryCodeUsed', u.id, { remaining: 9 }],
    ])
    assert.deepEqual(
      (await filtered('MfaRecoveryCodesRegenerated')).map(([action, userId]) => [action, userId]),
      [['MfaRecoveryCodesRegenerated', u.id]],
    )
    assert.deepEqual(
      (await filtered('PasskeyRegistered')).map(([action, userId, m]) => [
        action,
        userId,
        m.passkeyId,
      ]),
      [
        ['PasskeyRegistered', u.id, removed.passkey.id],
        ['PasskeyRegistered', u.id, kept.passkey.id],
      ],
    )
    assert.deepEqual(
      (await filtered('PasskeyRemoved')).map(([action, userId, m]) => [
        action,
        userId,
        m.passkeyId,
      ]),
      [['PasskeyRemoved', u.id, removed.passkey.id]],
    )
  })

  test('userId filters by the user an event concerns; unknown and foreign ids find nothing', async () => {
    const fresh = await createTenant(server)
    const alice = uuidv7()
    const bob = uuidv7()
    await record(fresh.tenantId, 'UserLogin', { userId: alice })
    await record(fresh.tenantId, 'UserLogin', { userId: bob })
    await record(fresh.tenantId, 'UserLogout', { userId: alice })
    await record(other.tenantId, 'UserLogin', { userId: alice })
    const aliceEvents = await list(fresh, `?userId=${alice}`)
    assert.deepEqual(
      aliceEvents.items.map((i) => [i.action, i.userId]),
      [
        ['UserLogout', alice],
        ['UserLogin', alice],
      ],
    )
    assert.deepEqual((await list(fresh, `?userId=${alice}&action=UserLogin`)).items.length, 1)
    assert.deepEqual((await list(fresh, `?userId=${uuidv7()}`)).items, [])
    // The admin of another tenant is a user id that exists, but not here.
    assert.deepEqual((await list(fresh, `?userId=${other.admin.user.id}`)).items, [])
  })

  test('before returns strictly older events', async () => {
    const fresh = await createTenant(server)
    const first = await record(fresh.tenantId, 'UserLogin', { metadata: { n: 1 } })
    const second = await record(fresh.tenantId, 'UserLogin', { metadata: { n: 2 } })
    await record(fresh.tenantId, 'UserLogin', { metadata: { n: 3 } })
    const older = await list(fresh, `?action=UserLogin&before=${encodeURIComponent(second)}`)
    assert.deepEqual(
      older.items.map((i) => i.metadata.n),
      [1],
    )
    assert.equal(older.items[0].createdAt, first)
    const none = await list(fresh, `?action=UserLogin&before=${encodeURIComponent(first)}`)
    assert.deepEqual(none.items, [])
    const offset = await list(
      fresh,
      `?action=UserLogin&before=${encodeURIComponent(second.replace('Z', '+00:00'))}`,
    )
    assert.equal(offset.items.length, 1)
  })

  test('limit defaults to 50, goes up to 200, and cursors cover every event once', async () => {
    const fresh = await createTenant(server)
    // 130 events, in groups of three sharing one timestamp (ties broken by id).
    for (let i = 0; i < 130; i++) {
      if (i % 3 === 0) server.clock.advance(1)
      await server.deps.audit.record(server.deps.db, fresh.tenantId, ACTOR, [
        { action: i % 2 ? 'UserLogin' : 'SessionCreated', metadata: { i } } as AuditEntry,
      ])
    }
    const all = await list(fresh, '?limit=200')
    assert.ok(all.items.length >= 130 && all.items.length <= 200)
    assert.equal(all.nextCursor, null)
    const first = await list(fresh)
    assert.equal(first.items.length, 50)
    assert.ok(first.nextCursor)
    assert.deepEqual(first.items, all.items.slice(0, 50))
    const one = await list(fresh, '?limit=1')
    assert.deepEqual(one.items, all.items.slice(0, 1))

    const paged = await listAll(fresh, '?limit=40')
    assert.deepEqual(
      paged.items.map((i) => i.id),
      all.items.map((i) => i.id),
    )
    assert.equal(paged.pages, Math.ceil(all.items.length / 40))

    const logins = await listAll(fresh, '?action=UserLogin&limit=7')
    assert.equal(logins.items.length, 65)
    assert.deepEqual(
      logins.items.map((i) => i.id),
      all.items.filter((i) => i.action === 'UserLogin').map((i) => i.id),
    )
  })

  test("a cursor of another tenant's log finds nothing here", async () => {
    const page = await list(other, '?limit=1')
    assert.ok(page.nextCursor)
    const fresh = await createTenant(server)
    assert.deepEqual((await list(fresh, `?cursor=${page.nextCursor}`)).items, [])
  })
})

describe('GET audit: search', () => {
  let fresh: TenantFixture
  before(async () => {
    fresh = await createTenant(server)
    await record(fresh.tenantId, 'UserLoginFailed', {
      email: 'searchable.person@example.com',
      metadata: { email: 'Searchable.Person@Example.com', reason: 'invalid_credentials' },
    })
    await record(fresh.tenantId, 'InviteCreated', {
      email: 'searchable.person@other.org',
      metadata: { inviteId: 'i-1' },
    })
    await record(fresh.tenantId, 'TenantUpdated', { metadata: { note: 'Quarterly-REVIEW' } })
    await record(fresh.tenantId, 'TenantUpdated', { metadata: { code: 'a_b', share: '100%' } })
    await record(fresh.tenantId, 'TenantUpdated', { metadata: { code: 'axb', share: '1000' } })
    await record(other.tenantId, 'TenantUpdated', {
      metadata: { note: 'only-in-the-other-tenant' },
    })
  })

  const found = async (term: string) =>
    (await list(fresh, `?search=${encodeURIComponent(term)}`)).items.map((i) => i.metadata)

  test('matches the email, the metadata and the action, case-insensitively', async () => {
    assert.equal((await found('SEARCHABLE.person@EXAMPLE.com')).length, 1)
    assert.deepEqual(await found('quarterly-review'), [{ note: 'Quarterly-REVIEW' }])
    assert.equal((await found('userloginfailed')).length, 1)
    assert.equal((await found('invalid_credentials')).length, 1)
    assert.deepEqual(await found('nothing-like-this-anywhere'), [])
  })

  test('an address matches as a whole: the same local part at another domain does not', async () => {
    assert.equal((await found('searchable.person@')).length, 2)
    assert.deepEqual(await found('Searchable.Person@Other.org'), [{ inviteId: 'i-1' }])
    assert.equal((await found('person@example.com')).length, 1)
    assert.deepEqual(await found('searchable.person@example.co.uk'), [])
  })

  test('% and _ are taken literally', async () => {
    assert.deepEqual(await found('a_b'), [{ code: 'a_b', share: '100%' }])
    assert.deepEqual(await found('100%'), [{ code: 'a_b', share: '100%' }])
    assert.deepEqual(await found('%'), [{ code: 'a_b', share: '100%' }])
  })

  test("never finds another tenant's events", async () => {
    assert.deepEqual(await found('only-in-the-other-tenant'), [])
  })

  test('combines with the other filters', async () => {
    const body = await list(fresh, '?search=example.com&action=TenantUpdated')
    assert.deepEqual(body.items, [])
    const hit = await list(fresh, '?search=example.com&action=UserLoginFailed&limit=1')
    assert.equal(hit.items.length, 1)
  })

  test('a failed login is found by its email, and the password is nowhere', async () => {
    const email = uniqueEmail('typo')
    const res = await server.request('POST', `/v1/${fresh.slug}/auth/login`, {
      email,
      password: 'Not-The-Password-9271',
    })
    expectError(res, 401, 'invalid_credentials')
    const hits = await list(fresh, `?search=${encodeURIComponent(email)}`)
    assert.deepEqual(
      hits.items.map((i) => i.action),
      ['UserLoginFailed'],
    )
    assert.equal(hits.items[0].metadata.email, email)
    const everything = await list(fresh, '?limit=200')
    assert.ok(!JSON.stringify(everything).includes('Not-The-Password-9271'))
  })

  test('a short search looks through one window of events per page and goes on with the cursor', async () => {
    const big = await createTenant(server)
    const start = server.clock.now().getTime() - 86_400_000
    // One old event that holds the rare pair "zq", then more than a window of newer ones.
    await server.deps.audit.record(server.deps.db, big.tenantId, ACTOR, [
      { action: 'TenantUpdated', metadata: { note: 'zq' } } as AuditEntry,
    ])
    await server.deps.db.execute(sql`
      UPDATE audit_events SET created_at = ${new Date(start - 1000)}
      WHERE tenant_id = ${big.tenantId} AND action = 'TenantUpdated'`)
    await server.deps.db.execute(sql`
      INSERT INTO audit_events (tenant_id, id, action, actor_type, metadata, created_at)
      SELECT ${big.tenantId}::uuid, gen_random_uuid(), 'UserLogin', 'system', '{}'::jsonb,
        ${new Date(start)}::timestamptz + i * interval '1 millisecond'
      FROM generate_series(1, ${SHORT_SEARCH_WINDOW + 100}) AS i`)

    const first = await list(big, '?search=zq')
    assert.deepEqual(first.items, [], 'the first window holds no match')
    assert.ok(first.nextCursor, 'but the search goes on')
    const all = await listAll(big, '?search=zq')
    assert.deepEqual(
      all.items.map((i) => i.metadata),
      [{ note: 'zq' }],
    )
    assert.ok(all.pages >= 2)

    // A common short term fills its page from the first window.
    const common = await list(big, '?search=Us&limit=20')
    assert.equal(common.items.length, 20)
    assert.ok(common.nextCursor)
    // A long term is served by the index: one page finds the old event.
    assert.equal((await list(big, '?search=TenantUpdated')).items.length, 1)
  })
})

describe('GET audit: bad queries and who may read it', () => {
  const bad: [string, string][] = [
    ['action=Bogus', 'querystring.action'],
    ['action=userlogin', 'querystring.action'],
    ['userId=not-a-uuid', 'querystring.userId'],
    ['before=yesterday', 'querystring.before'],
    ['before=2025-13-01T00:00:00Z', 'querystring.before'],
    ['limit=0', 'querystring.limit'],
    ['limit=201', 'querystring.limit'],
    ['limit=ten', 'querystring.limit'],
    ['search=', 'querystring.search'],
    [`search=${'s'.repeat(201)}`, 'querystring.search'],
    ['cursor=bogus', 'querystring.cursor'],
  ]
  for (const [query, issue] of bad) {
    test(`?${query.slice(0, 40)} is a 400 that records nothing`, async () => {
      await unchanged(server, t.tenantId, async () => {
        const res = await server.request('GET', `/v1/${t.slug}/audit?${query}`, undefined, {
          token: t.admin.accessToken,
        })
        expectValidation(res, issue)
      })
    })
  }

  test('search of 200 characters and limit of 200 are accepted', async () => {
    const body = await list(t, `?limit=200&search=${'s'.repeat(200)}`)
    assert.deepEqual(body.items, [])
  })

  test('an API key of the tenant may read it', async () => {
    const key = await createKey(server, t.slug, t.admin.accessToken)
    const body = await list(t, '?action=ApiKeyCreated', key.plaintext)
    assert.ok(body.items.some((i) => i.metadata.apiKeyId === key.apiKey.id))
  })

  test('no token 401; a Member 403; another tenant’s admin or key 401; unknown tenant 404', async () => {
    const member = await memberToken(server, t.slug)
    const foreignKey = await createKey(server, other.slug, other.admin.accessToken)
    const url = `/v1/${t.slug}/audit`
    await unchanged(server, t.tenantId, async () => {
      expectError(await server.request('GET', url), 401, 'token_missing')
      expectError(
        await server.request('GET', url, undefined, { token: member }),
        403,
        'admin_required',
      )
      expectError(
        await server.request('GET', url, undefined, { token: other.admin.accessToken }),
        401,
        'token_invalid',
      )
      expectError(
        await server.request('GET', url, undefined, { token: foreignKey.plaintext }),
        401,
        'invalid_api_key',
      )
    })
    expectError(
      await server.request('GET', '/v1/no-such-tenant/audit', undefined, {
        token: t.admin.accessToken,
      }),
      404,
      'tenant_not_found',
    )
  })
})
