// A user's `locale` (CONTRACT §20): in the user record, set by PATCH me, PATCH users, SCIM
// `preferredLanguage` and import rows; a locale the service has no catalogue for is refused
// with the documented error, naming the field, and changes nothing.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditMark, auditSince, unchanged, userByEmail, userRow } from '../../../test/db.ts'
import { expectValidation } from '../../../test/envelope.ts'
import { expectScimError, scimTenant, USER_SCHEMA } from '../../../test/fixtures/scim.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const patchMe = (token: string, body: unknown) =>
  server.request('PATCH', `/v1/${t.slug}/me`, body, { token })

const BAD_LOCALES: unknown[] = ['xx', 'de-AT', 'DE', 'en_US', '', 1, true, ['de'], { de: 1 }]

describe('PATCH me', () => {
  test('sets and clears the locale; /me, the token envelope and the audit log show it', async () => {
    const u = await signup(server, t.slug)
    assert.equal(u.user.locale, null, 'null by default')
    const mark = await auditMark(server, t.tenantId)
    const set = await patchMe(u.accessToken, { locale: 'de' })
    assert.equal(set.status, 200, JSON.stringify(set.body))
    assert.equal(set.body.locale, 'de')
    assert.equal(set.body.tenant.slug, t.slug, 'answered as GET /me answers')
    assert.equal((await userRow(server, t.tenantId, u.user.id))?.locale, 'de')
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })
    assert.equal(me.body.locale, 'de')
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: u.password,
    })
    assert.equal(login.body.user.locale, 'de')
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.filter((e) => e.action === 'UserUpdated').map((e) => e.metadata),
      [{ fields: ['locale'], changes: {}, via: 'me' }],
    )

    // The same value again is no change; an empty body neither.
    const again = await auditMark(server, t.tenantId)
    assert.equal((await patchMe(u.accessToken, { locale: 'de' })).status, 200)
    assert.equal((await patchMe(u.accessToken, {})).body.locale, 'de')
    assert.deepEqual(await auditSince(server, t.tenantId, again), [])

    const cleared = await patchMe(u.accessToken, { locale: null })
    assert.equal(cleared.status, 200)
    assert.equal(cleared.body.locale, null)
    assert.equal((await userRow(server, t.tenantId, u.user.id))?.locale, null)
  })

  test('an unknown locale or a bad body is 400 validation naming the field, nothing changed', async () => {
    const u = await signup(server, t.slug)
    await patchMe(u.accessToken, { locale: 'fr' })
    await unchanged(server, t.tenantId, async () => {
      for (const locale of BAD_LOCALES) {
        expectValidation(await patchMe(u.accessToken, { locale }), 'body.locale')
      }
      expectValidation(await patchMe(u.accessToken, ['de']))
    })
    assert.equal((await userRow(server, t.tenantId, u.user.id))?.locale, 'fr')
  })

  test('needs a signed-in user', async () => {
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request('PATCH', `/v1/${t.slug}/me`, { locale: 'de' })
      assert.equal(res.status, 401)
    })
  })
})

describe('PATCH users/{id}', () => {
  test('an admin sets a user’s locale; an unknown one is 400 validation, nothing changed', async () => {
    const u = await signup(server, t.slug)
    const token = t.admin.accessToken as string
    const patch = (body: unknown) =>
      server.request('PATCH', `/v1/${t.slug}/users/${u.user.id}`, body, { token })
    const res = await patch({ locale: 'fr' })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.locale, 'fr')
    const listed = await server.request('GET', `/v1/${t.slug}/users?limit=50`, undefined, {
      token,
    })
    assert.equal(listed.body.items.find((i: { id: string }) => i.id === u.user.id)?.locale, 'fr')
    await unchanged(server, t.tenantId, async () => {
      for (const locale of BAD_LOCALES) expectValidation(await patch({ locale }), 'body.locale')
    })
    assert.equal((await patch({ locale: null })).body.locale, null)
  })
})

describe('SCIM preferredLanguage', () => {
  test('kept as the best-matching supported locale, answered back, cleared by a PUT without it', async () => {
    const s = await scimTenant(server)
    const created = await s.scim('POST', '/Users', {
      schemas: [USER_SCHEMA],
      userName: uniqueEmail('scim'),
      preferredLanguage: 'de-CH',
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.equal(created.body.preferredLanguage, 'de')
    assert.equal((await userRow(server, s.tenantId, created.body.id))?.locale, 'de')
    // An Accept-Language list: its best tag the service speaks.
    const patched = await s.scim('PATCH', `/Users/${created.body.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', path: 'preferredLanguage', value: 'sw, fr-CA;q=0.8' }],
    })
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    assert.equal(patched.body.preferredLanguage, 'fr')
    assert.notEqual(patched.body.meta.version, created.body.meta.version)
    const put = await s.scim('PUT', `/Users/${created.body.id}`, {
      schemas: [USER_SCHEMA],
      userName: created.body.userName,
    })
    assert.equal(put.status, 200)
    assert.equal(put.body.preferredLanguage, undefined)
    assert.equal((await userRow(server, s.tenantId, created.body.id))?.locale, null)
  })

  test('a language the service does not speak is 400 invalidValue, nothing changed', async () => {
    const s = await scimTenant(server)
    const created = await s.scim('POST', '/Users', {
      schemas: [USER_SCHEMA],
      userName: uniqueEmail('scim'),
      preferredLanguage: 'fr',
    })
    await unchanged(server, s.tenantId, async () => {
      for (const value of ['sw', 'xx-YY', 7, ['de'], 'x'.repeat(300)]) {
        expectScimError(
          await s.scim('POST', '/Users', {
            schemas: [USER_SCHEMA],
            userName: uniqueEmail('scim'),
            preferredLanguage: value,
          }),
          400,
          'invalidValue',
        )
        expectScimError(
          await s.scim('PATCH', `/Users/${created.body.id}`, {
            schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
            Operations: [{ op: 'replace', path: 'preferredLanguage', value }],
          }),
          400,
          'invalidValue',
        )
      }
    })
  })
})

describe('import rows', () => {
  test('a row’s locale is stored; an unknown one is that row’s error (validation), nothing of it stored', async () => {
    const tenant = await createTenant(server)
    const token = tenant.admin.accessToken as string
    const good = uniqueEmail('imp')
    const bad = uniqueEmail('imp')
    const res = await server.request(
      'POST',
      `/v1/${tenant.slug}/users/import`,
      {
        users: [
          { email: good, locale: 'fr' },
          { email: bad, locale: 'fr-FR' },
          { email: uniqueEmail('imp'), locale: 'xx' },
        ],
      },
      { token },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(
      res.body.results.map((r: { status: string; reason?: string }) => [r.status, r.reason]),
      [
        ['created', undefined],
        ['error', 'validation'],
        ['error', 'validation'],
      ],
    )
    assert.equal((await userByEmail(server, tenant.tenantId, good))?.locale, 'fr')
    assert.equal(await userByEmail(server, tenant.tenantId, bad), undefined)
    // An update of an existing user sets it too.
    const update = await server.request(
      'POST',
      `/v1/${tenant.slug}/users/import`,
      { users: [{ email: good, locale: 'de' }], onConflict: 'update' },
      { token },
    )
    assert.equal(update.body.results[0].status, 'updated', JSON.stringify(update.body))
    assert.equal((await userByEmail(server, tenant.tenantId, good))?.locale, 'de')
  })
})
