// A tenant's languages (CONTRACT §20): `defaultLocale` (en) and `locales` (every supported
// one) in the record, set by PATCH tenant with tenant:write; an unknown locale or a default
// outside the locales is 400 validation, nothing changed; the pages then speak only the
// tenant's locales, falling back to its default.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'
import { supportedLocales } from '../../i18n/index.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx)
})

const patchTenant = (t: TenantFixture, body: unknown, token = t.admin.accessToken as string) =>
  server.request('PATCH', `/v1/${t.slug}/tenant`, body, { token })
const htmlTag = (markup: string) => /<html[^>]*>/.exec(markup)?.[0] ?? ''

describe('PATCH tenant: defaultLocale and locales', () => {
  test('en and every supported locale by default; set, audited, in the service’s order', async () => {
    const t = await createTenant(server)
    const get = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(get.body.defaultLocale, 'en')
    assert.deepEqual(get.body.locales, supportedLocales)
    const mark = await auditMark(server, t.tenantId)
    const res = await patchTenant(t, { locales: ['fr', 'de'], defaultLocale: 'de' })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.defaultLocale, 'de')
    assert.deepEqual(res.body.locales, ['de', 'fr'])
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.metadata]),
      [
        [
          'TenantUpdated',
          {
            fields: ['defaultLocale', 'locales'],
            changes: {
              defaultLocale: { from: 'en', to: 'de' },
              locales: { from: null, to: ['de', 'fr'] },
            },
          },
        ],
      ],
    )
    // The same again is no change.
    const again = await auditMark(server, t.tenantId)
    assert.equal((await patchTenant(t, { locales: ['de', 'fr'] })).status, 200)
    assert.deepEqual(await auditSince(server, t.tenantId, again), [])
  })

  test('an unknown locale, a default outside the locales, or a bad list is 400 validation, nothing changed', async () => {
    const t = await createTenant(server)
    await patchTenant(t, { locales: ['en', 'fr'] })
    const cases: [unknown, string][] = [
      [{ defaultLocale: 'xx' }, 'body.defaultLocale'],
      [{ defaultLocale: 'DE' }, 'body.defaultLocale'],
      [{ defaultLocale: null }, 'body.defaultLocale'],
      [{ defaultLocale: 'de' }, 'body.defaultLocale'],
      [{ locales: ['fr'] }, 'body.locales'],
      [{ locales: ['en', 'xx'] }, 'body.locales.1'],
      [{ locales: [] }, 'body.locales'],
      [{ locales: ['en', 'en'] }, 'body.locales'],
      [{ locales: 'en' }, 'body.locales'],
      [{ locales: ['de'], defaultLocale: 'fr' }, 'body.defaultLocale'],
    ]
    await unchanged(server, t.tenantId, async () => {
      for (const [body, path] of cases) {
        const res = await patchTenant(t, body)
        expectValidation(res, path)
      }
    })
  })

  test('a user without tenant:write cannot set them', async () => {
    const t = await createTenant(server)
    const member = await signup(server, t.slug)
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await patchTenant(t, { defaultLocale: 'de' }, member.accessToken),
        403,
        'admin_required',
      )
    })
  })
})

describe('the pages among the tenant’s locales', () => {
  test('a locale the tenant does not offer is never chosen; its default is the fallback; the picker lists its own', async () => {
    const t = await createTenant(server)
    await patchTenant(t, { locales: ['en', 'fr'], defaultLocale: 'fr' })
    const c = new PageClient(server, randomIp())
    const plain = await c.get(`/t/${t.slug}/sign-in`)
    assert.equal(htmlTag(plain.html), '<html lang="fr" dir="ltr">', 'the tenant default')
    c.headers['accept-language'] = 'de, en;q=0.5'
    assert.equal(htmlTag((await c.get(`/t/${t.slug}/sign-in`)).html), '<html lang="en" dir="ltr">')
    const asked = await c.get(`/t/${t.slug}/sign-in?lang=de`)
    assert.equal(htmlTag(asked.html), '<html lang="en" dir="ltr">')
    assert.equal(c.cookies.get('ta_lang'), undefined, 'a locale not offered is not remembered')
    const picker = /<nav class="languages"[\s\S]*?<\/nav>/.exec(asked.html)?.[0] ?? ''
    assert.match(picker, /hreflang="fr"/)
    assert.match(picker, /hreflang="en"/)
    assert.doesNotMatch(picker, /hreflang="de"/)
    // The user's own locale, when the tenant does not offer it, is passed over too.
    const user = await signup(server, t.slug)
    await server.request('PATCH', `/v1/${t.slug}/me`, { locale: 'de' }, { token: user.accessToken })
    c.headers['accept-language'] = ''
    await c.get(`/t/${t.slug}/sign-in`)
    const account = await c.post(`/t/${t.slug}/sign-in`, {
      email: user.email,
      password: user.password,
    })
    assert.match(account.url, /\/account$/)
    assert.equal(htmlTag(account.html), '<html lang="fr" dir="ltr">')
  })
})
