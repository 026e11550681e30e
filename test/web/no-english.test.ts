// CONTRACT §20, "every string translated (no English left in another language)": every
// hosted page (signed out, signed in, the refusals, the error pages, the pages the OpenID
// provider draws) and every mail, rendered in each language but English, holds no English
// string of the catalogue; and in the languages not written in Latin script (ja, zh-CN, ko,
// ar) no Latin word at all beyond a short list of names, so a string that never went
// through the catalogue shows too (what a pseudo-locale would catch).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { catalogues, DEFAULT_LOCALE, supportedLocales } from '../../src/i18n/index.ts'
import { codeMail } from '../../src/modules/codes/mail.ts'
import { issueCode } from '../../src/modules/codes/service.ts'
import { inviteMail } from '../../src/modules/invites/mail.ts'
import {
  SECURITY_EVENTS,
  type SecurityEvent,
  securityAlertMail,
} from '../../src/modules/notifications/security.ts'
import { invitationMail } from '../../src/modules/organizations/mail.ts'
import {
  browserBinding,
  magicLinkMail,
  sealMagicLink,
} from '../../src/modules/passwordless/magic-link.ts'
import type { Tenant } from '../../src/modules/tenants/tenant.ts'
import { setUser } from '../db.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { PageClient, textOf } from './page-client.ts'

let server: TestServer
let t: TenantFixture
let clientId: string
let organizationId: string
const REDIRECT = 'https://app.example.com/callback'

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server, { name: 'Acme' })
  const made = await server.request(
    'POST',
    `/v1/${t.slug}/applications`,
    { name: 'Widget', type: 'web', redirectUris: [REDIRECT] },
    { token: t.admin.accessToken },
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  clientId = made.body.application.clientId
  const org = await server.request(
    'POST',
    `/v1/${t.slug}/organizations`,
    { name: 'Acme', mfaRequired: true },
    { token: t.admin.accessToken },
  )
  assert.equal(org.status, 200, JSON.stringify(org.body))
  organizationId = org.body.organization.id
  // Codes and links both offered, so the request page draws its two buttons (CONTRACT §20).
  const policy = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { authPolicy: 'PasswordAndPasswordless', passwordlessMethod: 'both' },
    { token: t.admin.accessToken },
  )
  assert.equal(policy.status, 200, JSON.stringify(policy.body))
  server.deps.tenants.forget(t.slug)
})

const others = supportedLocales.filter((l) => l !== DEFAULT_LOCALE)
const NON_LATIN = new Set(['ja', 'zh-CN', 'ko', 'ar'])

/**
 * The literal parts (8 characters or more) of each English message that `locale` says
 * differently: the placeholders and ICU syntax cut out.
 */
function englishFragments(locale: string): string[] {
  const en = catalogues.get(DEFAULT_LOCALE) ?? {}
  const other = catalogues.get(locale) ?? {}
  return Object.entries(en)
    .filter(([key, message]) => other[key] !== message)
    .flatMap(([, message]) => message.split(/\{[^{}]*\}|\{|\}|#/))
    .map((part) => part.trim())
    .filter((part) => part.length >= 8)
}

/**
 * Latin words allowed on a page in a non-Latin script: names that are the same in every
 * language (the product and protocol names the catalogues keep), the test's own data
 * (the tenant, the application, addresses), and a code's sample.
 */
const NAMES = new Set([
  'Acme',
  'Widget',
  'JSON',
  'API',
  'OpenAPI',
  'OpenID',
  'Connect',
  'UTC',
  'POST',
  'DELETE',
  'TENANT_CREATION_TOKEN',
  'docs',
  'openapi',
  'json',
  'example',
  'com',
  'abcde',
  'fghij',
  'name',
  'address',
  'invalid_state',
  'invalid_client',
  'idp_error',
  'sso_user_not_provisioned',
  // Browser and system families (lib/user-agent.ts): names, not words.
  'Firefox',
  'Chrome',
  'Safari',
  'Edge',
  'Windows',
  'Linux',
  'macOS',
  'Android',
  'iOS',
])

/** What a person reads of a page: its text, and the words of its attributes. */
function readable(markup: string): string {
  // The picker and the account's language select name each language in itself.
  const withoutPicker = markup
    .replace(/<nav class="languages"[\s\S]*?<\/nav>/, '')
    .replace(/<select id="locale"[\s\S]*?<\/select>/, '')
    // A TOTP key, and the OpenID provider's error_description: a protocol's English for the
    // application's developer (RFC 6749 §4.1.2.1), marked lang="en" for screen readers.
    .replace(/<code class="secret">[^<]*<\/code>/g, '')
    .replace(/<p lang="en">[^<]*<\/p>/g, '')
  const attributes = [
    ...withoutPicker.matchAll(
      /\s(?:aria-label|title|alt|placeholder|data-cancelled|data-failed)="([^"]*)"/g,
    ),
  ].map((m) => m[1])
  return [textOf(withoutPicker), ...attributes].join(' \n ')
}

function assertNoEnglish(locale: string, what: string, text: string, extra: string[] = []) {
  // A whole-word match: French "Continuer" holds the English "Continue".
  const left = englishFragments(locale).filter((f) =>
    new RegExp(`(?<![\\p{L}])${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}])`, 'u').test(
      text,
    ),
  )
  assert.deepEqual(left, [], `${what} in ${locale}: English left`)
  if (!NON_LATIN.has(locale)) return
  const allowed = new Set([...NAMES, ...extra])
  const latin = (
    text.replace(/\S+@\S+|https?:\/\/\S+|\/[\w/{}.?=&%-]*/g, ' ').match(/[A-Za-z][A-Za-z_]{2,}/g) ??
    []
  )
    // A code in capitals (a TOTP key, the device code's sample BCDF-GHJK) is no word either.
    .filter((word) => !allowed.has(word) && !/^[A-Z2-7]{4,}$/.test(word))
  assert.deepEqual(latin, [], `${what} in ${locale}: Latin words`)
}

interface Rendered {
  what: string
  html: string
}

/** Every hosted page a person meets, in `locale`: the picker's `?lang=` chooses it first. */
async function everyPage(locale: string): Promise<Rendered[]> {
  const c = new PageClient(server, randomIp())
  const out: Rendered[] = []
  const keep = <P extends { html: string }>(what: string, page: P) => {
    out.push({ what, html: page.html })
    return page
  }
  const base = `/t/${t.slug}`
  const first = keep('sign-in', await c.get(`${base}/sign-in?lang=${locale}`))
  assert.match(first.html, new RegExp(`<html lang="${locale}"`))
  for (const path of [
    'sign-up',
    'sign-in/code',
    'reset-password',
    'invite',
    'sign-in/sso',
    'sign-in/sso/second-factor',
    'sign-in?idp=idp_error',
    'no-such-page',
  ]) {
    keep(path, await c.get(`${base}/${path}`))
  }
  // The refusals beside a form (web/messages.ts), and a form sent without its CSRF field.
  await c.get(`${base}/sign-in`)
  keep(
    'sign-in refused',
    await c.post(`${base}/sign-in`, { email: uniqueEmail('nobody'), password: 'wrong-password-1' }),
  )
  await c.get(`${base}/sign-up`)
  keep('sign-up refused', await c.post(`${base}/sign-up`, { email: 'not-an-email', password: 'x' }))
  const expired = await c.once('POST', `${base}/sign-in`, { email: 'a@example.com' })
  out.push({ what: 'expired form', html: await expired.text() })
  await c.get(`${base}/sign-in/code`)
  const sent = keep(
    'code sent',
    await c.post(`${base}/sign-in/code`, { email: uniqueEmail('code') }),
  )
  assert.match(sent.html, /name="pending"/, `${locale}: the code form`)
  await c.get(`${base}/sign-in/code`)
  const linked = await c.post(`${base}/sign-in/code`, {
    email: uniqueEmail('link'),
    method: 'link',
  })
  keep('link sent', linked)
  assert.match(linked.html, /name="pending"/, `${locale}: the link's code form`)
  keep('link refused', await c.get(`${base}/magic-link?token=altered`))
  // A link opened in a browser that did not ask for it shows its code (magic-link.ts).
  const reader = await signup(server, t.slug, uniqueEmail('linked'))
  const code = await server.deps.db.transaction((tx) =>
    issueCode(server.deps, tx, { tenantId: t.tenantId, userId: reader.user.id, purpose: 'login' }),
  )
  const token = sealMagicLink(server.deps, t.tenantId, {
    email: reader.email,
    code: code as string,
    browser: browserBinding('another-browser'),
  })
  const elsewhere = keep(
    'link elsewhere',
    await c.get(`${base}/magic-link?token=${encodeURIComponent(token)}`),
  )
  assert.ok(elsewhere.html.includes(code as string), `${locale}: the link's code shown`)
  await c.get(`${base}/reset-password`)
  keep('reset sent', await c.post(`${base}/reset-password`, { email: uniqueEmail('reset') }))
  // An unknown workspace, in the language asked for.
  keep('no workspace', await c.get(`/t/no-such-${t.slug}/sign-in?lang=${locale}`))
  // Signed in: the account page, a step that asks for a fresh proof, verifying the address.
  const user = await signup(server, t.slug, uniqueEmail('reader'))
  await c.get(`${base}/sign-in`)
  const account = keep(
    'account',
    await c.post(`${base}/sign-in`, { email: user.email, password: STRONG_PASSWORD }),
  )
  assert.match(account.url, /\/account$/, `${locale}: signed in`)
  keep('confirm', await c.post(`${base}/account/totp`, {}))
  await c.get(`${base}/account`)
  keep('verify own address', await c.post(`${base}/account/verify`, {}))
  await c.get(`${base}/account`)
  keep('account refused', await c.post(`${base}/account/delete`, { confirm: 'no' }))
  // An account without a password (as a social connection or a code makes one): "Set a
  // password", its refusal, its "Confirm it's you" once the proof is old, and its notice.
  await setUser(server, t.tenantId, user.user.id, { passwordHash: null })
  keep('account without a password', await c.get(`${base}/account`))
  keep('first password refused', await c.post(`${base}/account/password/set`, { newPassword: 'x' }))
  server.clock.advance(11 * 60)
  try {
    keep(
      'confirm a first password',
      await c.post(`${base}/account/password/set`, { newPassword: 'lantern-meadow-quartz-47' }),
    )
  } finally {
    server.clock.advance(-11 * 60)
  }
  await c.get(`${base}/account`)
  const set = keep(
    'first password set',
    await c.post(`${base}/account/password/set`, { newPassword: 'lantern-meadow-quartz-47' }),
  )
  assert.match(set.url, /done=password-set$/, `${locale}: the password set`)
  await c.get(`${base}/account`)
  keep(
    'first password again',
    await c.post(`${base}/account/confirm/continue`, { next: 'password-set', pending: 'x' }),
  )
  // An application's organization steps (CONTRACT §18): the picker, and the second factor an
  // organization with mfaRequired asks of a session that proved none.
  const joined = await server.request(
    'PUT',
    `/v1/${t.slug}/organizations/${organizationId}/members/${user.user.id}`,
    { roles: [] },
    { token: t.admin.accessToken },
  )
  assert.equal(joined.status, 200, JSON.stringify(joined.body))
  const publicUrl = server.deps.config.publicUrl
  const interactionPage = async (extra: Record<string, string>) => {
    const query = new URLSearchParams({
      response_type: 'code',
      scope: 'openid',
      client_id: clientId,
      redirect_uri: REDIRECT,
      ...extra,
    })
    let url = `${server.url}/oidc/${t.slug}/auth?${query}`
    for (let hop = 0; hop < 8; hop++) {
      const res = await c.once('GET', url)
      const location = res.headers.get('location')
      if (!location) return { html: await res.text() }
      const next = new URL(location, url).href
      url = next.startsWith(publicUrl) ? server.url + next.slice(publicUrl.length) : next
    }
    assert.fail(`${locale}: no interaction page`)
  }
  const picker = keep('picker', await interactionPage({ prompt: 'select_organization' }))
  assert.match(picker.html, /name="organizationId"/, `${locale}: the organization picker`)
  const asked = keep('second factor', await interactionPage({ organization_id: organizationId }))
  assert.match(asked.html, /\/second-factor"/, `${locale}: the organization's second factor`)
  // The pages the OpenID provider draws through the pages' hooks: its error page, the device
  // page. (Its own auto-submitting step to end_session_confirm is not one of them.)
  const authorize = new URLSearchParams({
    response_type: 'code',
    scope: 'openid',
    client_id: 'no-such-client',
    redirect_uri: REDIRECT,
    lang: locale,
  })
  keep('oidc error', await c.get(`/oidc/${t.slug}/auth?${authorize}`))
  keep('device', await c.get(`/oidc/${t.slug}/device?lang=${locale}`))
  return out
}

describe('no English left in another language (CONTRACT §20)', () => {
  test('the check finds the English strings in the English pages', async () => {
    const c = new PageClient(server, randomIp())
    const page = await c.get(`/t/${t.slug}/sign-in?lang=en`)
    const fragments = englishFragments('ja')
    assert.ok(fragments.length > 200, 'the check has strings to look for')
    assert.ok(fragments.some((f) => readable(page.html).includes(f)))
  })

  for (const locale of others) {
    test(`${locale}: every hosted page`, async () => {
      const pages = await everyPage(locale)
      for (const { what, html } of pages) {
        assert.ok(html.length > 200, `${what} drawn: ${html.slice(0, 300)}`)
        assert.match(
          html,
          new RegExp(`<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}"`),
          what,
        )
        assertNoEnglish(locale, what, readable(html), [t.slug])
      }
    })

    test(`${locale}: every mail`, () => {
      const tenant = {
        name: 'Acme',
        slug: t.slug,
        locales: null,
        defaultLocale: DEFAULT_LOCALE,
      } as unknown as Tenant
      const recipient = { to: 'a@example.com', locale }
      const mails = [
        ...(['login', 'mfa', 'reset', 'verify'] as const).map((kind) =>
          codeMail(kind, recipient, tenant, '123456'),
        ),
        ...['Admin', 'Member'].map((role) =>
          inviteMail(
            server.deps.config,
            tenant,
            {
              role,
              createdAt: new Date('2026-12-17T10:00:00Z'),
              expiresAt: new Date('2026-12-24T10:00:00Z'),
            } as never,
            'token-value',
            locale,
          ),
        ),
        invitationMail(
          server.deps.config,
          tenant,
          { name: 'Widget Team' } as never,
          {
            role: 'member',
            createdAt: new Date('2026-12-17T10:00:00Z'),
            expiresAt: new Date('2026-12-24T10:00:00Z'),
          } as never,
          'token-value',
          locale,
        ),
        magicLinkMail(
          tenant,
          recipient,
          `https://auth.example.com/t/${t.slug}/magic-link?token=abc`,
        ),
        ...(Object.keys(SECURITY_EVENTS) as SecurityEvent[]).map((event) =>
          securityAlertMail(
            server.deps,
            tenant,
            { email: 'a@example.com', locale },
            {
              event,
              ip: '203.0.113.9',
              userAgent:
                'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0',
              notes: [
                { key: 'mail.alert.note.adminReset' },
                { key: 'mail.alert.note.scimPassword' },
                { key: 'mail.alert.note.recoveryLeft', values: { remaining: 3, total: 10 } },
              ],
            },
          ),
        ),
      ]
      for (const mail of mails) {
        // The alert's fixed prefix is English by design (CONTRACT §20: mail filters rely on it).
        const subject = mail.subject.replace(/^Security alert: /, '')
        const what = `mail "${mail.subject}"`
        // The browser's family name, the token and the API's body example are not words.
        // The tenant's random slug (named in the invitations) may hold letters too.
        const extra = ['Firefox', 'Windows', 'token', 'value', 'password', 'Team']
        extra.push(...(t.slug.match(/[A-Za-z][A-Za-z_]{2,}/g) ?? []))
        for (const part of [subject, mail.text, textOf(mail.html ?? '')]) {
          assertNoEnglish(locale, what, part, extra)
        }
      }
    })
  }
})
