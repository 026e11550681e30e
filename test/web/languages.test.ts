// The hosted pages' language over HTTP (CONTRACT §20): Accept-Language, `?lang=` and the
// cookie that remembers it, `<html lang dir>`, the language picker.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { catalogues } from '../../src/i18n/index.ts'
import { unchanged, userRow } from '../db.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TestServer,
} from '../helpers.ts'
import { PageClient, textOf } from './page-client.ts'

let server: TestServer

before(async (ctx) => {
  server = await startTestServer(ctx)
})

const htmlTag = (markup: string) => /<html[^>]*>/.exec(markup)?.[0] ?? ''

describe('the pages’ language', () => {
  test('English by default, Accept-Language chosen by best match', async () => {
    const t = await createTenant(server)
    const c = new PageClient(server, randomIp())
    const plain = await c.get(`/t/${t.slug}/sign-in`)
    assert.equal(htmlTag(plain.html), '<html lang="en" dir="ltr">')
    assert.match(plain.html, /<h1>Sign in to /)

    c.headers['accept-language'] = 'sw, de-AT;q=0.9, fr;q=0.8'
    const german = await c.get(`/t/${t.slug}/sign-in`)
    assert.equal(german.status, 200)
    assert.equal(htmlTag(german.html), '<html lang="de" dir="ltr">')
    assert.match(german.html, /<h1>Bei .* anmelden<\/h1>/)
    assert.match(german.html, /<label for="password">Passwort<\/label>/)
    assert.equal(c.cookies.get('ta_lang'), undefined, 'a header is not remembered')

    c.headers['accept-language'] = 'sw, xx'
    const unknown = await c.get(`/t/${t.slug}/sign-in`)
    assert.equal(htmlTag(unknown.html), '<html lang="en" dir="ltr">')
  })

  test('?lang= wins over Accept-Language and is remembered in a cookie', async () => {
    const t = await createTenant(server)
    const c = new PageClient(server, randomIp())
    c.headers['accept-language'] = 'de'
    const french = await c.get(`/t/${t.slug}/sign-in?lang=fr`)
    assert.equal(htmlTag(french.html), '<html lang="fr" dir="ltr">')
    assert.match(french.html, /Mot de passe oublié/)
    assert.equal(c.cookies.get('ta_lang'), 'fr')
    // The next page, without ?lang=: the cookie, not the header.
    const again = await c.get(`/t/${t.slug}/sign-in`)
    assert.equal(htmlTag(again.html), '<html lang="fr" dir="ltr">')
    // Another case of a supported tag is the same locale, remembered as the catalogue names it.
    await c.get(`/t/${t.slug}/sign-in?lang=DE`)
    assert.equal(c.cookies.get('ta_lang'), 'de')
  })

  test('an unknown ?lang= is passed over and not remembered', async () => {
    const t = await createTenant(server)
    const c = new PageClient(server, randomIp())
    c.headers['accept-language'] = 'de'
    for (const lang of ['xx', 'de%22%3E%3Cscript%3E', '']) {
      const page = await c.get(`/t/${t.slug}/sign-in?lang=${lang}`)
      assert.equal(page.status, 200)
      assert.equal(htmlTag(page.html), '<html lang="de" dir="ltr">')
      assert.doesNotMatch(page.html, /<script>/)
    }
    assert.equal(c.cookies.get('ta_lang'), undefined)
  })

  test('every page has a language picker: links to the same page with ?lang=', async () => {
    const t = await createTenant(server)
    const c = new PageClient(server, randomIp())
    const page = await c.get(`/t/${t.slug}/sign-in?lang=de`)
    const picker = /<nav class="languages" aria-label="Sprache">[\s\S]*?<\/nav>/.exec(page.html)
    assert.ok(picker, 'a labelled picker')
    for (const locale of catalogues.keys()) {
      assert.match(
        picker[0],
        new RegExp(
          `href="/t/${t.slug}/sign-in\\?lang=${locale}" lang="${locale}" hreflang="${locale}"`,
        ),
      )
    }
    assert.match(picker[0], /lang="de" hreflang="de" aria-current="true">Deutsch</)
    assert.match(picker[0], />Français</)
    assert.match(picker[0], />English</)
  })
})

describe('the signed-in user’s locale', () => {
  test('comes after ?lang= and before Accept-Language; the account page sets it with a select', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    await server.request('PATCH', `/v1/${t.slug}/me`, { locale: 'fr' }, { token: user.accessToken })
    const c = new PageClient(server, randomIp())
    c.headers['accept-language'] = 'de'
    await c.get(`/t/${t.slug}/sign-in`)
    const account = await c.post(`/t/${t.slug}/sign-in`, {
      email: user.email,
      password: STRONG_PASSWORD,
    })
    assert.match(account.url, /\/account$/)
    assert.equal(
      htmlTag(account.html),
      '<html lang="fr" dir="ltr">',
      'the user’s, not the header’s',
    )
    const select = /<select id="locale" name="locale">[\s\S]*?<\/select>/.exec(account.html)?.[0]
    assert.ok(select, 'a language select')
    assert.match(select, /<option value="fr" lang="fr" selected>Français<\/option>/)
    assert.match(select, /<option value="" *>/)
    assert.match(account.html, /<label for="locale">/)
    // ?lang= still wins, and is remembered.
    const german = await c.get(`/t/${t.slug}/account?lang=de`)
    assert.equal(htmlTag(german.html), '<html lang="de" dir="ltr">')
    assert.equal(c.cookies.get('ta_lang'), 'de')

    // Saving English: stored, the page speaks it at once, the remembered lang follows.
    const saved = await c.post(`/t/${t.slug}/account/locale`, { locale: 'en' })
    assert.match(saved.url, /\/account\?done=language$/)
    assert.equal(htmlTag(saved.html), '<html lang="en" dir="ltr">')
    assert.match(saved.html, /Your language is saved\./)
    assert.equal((await userRow(server, t.tenantId, user.user.id))?.locale, 'en')
    assert.equal(c.cookies.get('ta_lang'), 'en')

    // "Follow my browser": cleared, the header decides again.
    const auto = await c.post(`/t/${t.slug}/account/locale`, { locale: '' })
    assert.equal((await userRow(server, t.tenantId, user.user.id))?.locale, null)
    assert.equal(c.cookies.get('ta_lang'), undefined, 'the remembered lang is cleared')
    assert.equal(htmlTag(auto.html), '<html lang="de" dir="ltr">')
  })

  test('an unknown locale posted is refused beside the field, nothing changed', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = new PageClient(server, randomIp())
    await c.get(`/t/${t.slug}/sign-in`)
    await c.post(`/t/${t.slug}/sign-in`, { email: user.email, password: STRONG_PASSWORD })
    const csrf = c.csrf()
    await unchanged(server, t.tenantId, async () => {
      for (const locale of ['xx', 'DE', '<b>de</b>']) {
        const page = await c.post(`/t/${t.slug}/account/locale`, { _csrf: csrf, locale })
        assert.equal(page.status, 400)
        assert.match(page.html, /id="locale-error"|class="error-summary"/)
        assert.doesNotMatch(page.html, /<b>de<\/b>/)
      }
    })
  })
})

/** The literal parts (8 characters or more) of each English message that another locale says differently. */
function englishFragments(locale: string): string[] {
  const en = catalogues.get('en') ?? {}
  const other = catalogues.get(locale) ?? {}
  return Object.entries(en)
    .filter(([key, message]) => other[key] !== message)
    .flatMap(([, message]) => message.split(/\{[^}]*\}/))
    .map((part) => part.trim())
    .filter((part) => part.length >= 8)
}

describe('a page in German or French', () => {
  for (const locale of ['de', 'es', 'fr']) {
    test(`${locale}: the signed-out pages hold no English string of the catalogue`, async () => {
      const t = await createTenant(server)
      const c = new PageClient(server, randomIp())
      const fragments = englishFragments(locale)
      assert.ok(fragments.length > 50, 'the check has strings to look for')
      for (const path of ['sign-in', 'sign-up', 'sign-in/code', 'reset-password', 'invite']) {
        const page = await c.get(`/t/${t.slug}/${path}?lang=${locale}`)
        const text = textOf(page.html)
        assert.ok(text.length > 40, path)
        const left = fragments.filter((f) => text.includes(f))
        assert.deepEqual(left, [], `${path} in ${locale}`)
      }
      // And the check finds them in the English page.
      const english = textOf((await c.get(`/t/${t.slug}/sign-in?lang=en`)).html)
      assert.ok(fragments.some((f) => english.includes(f)))
    })
  }
})

describe('an error page of a workspace', () => {
  test('speaks the request’s language: a 405 in German, in English by default', async () => {
    const t = await createTenant(server)
    const german = await fetch(new URL(`/t/${t.slug}/sign-in?lang=de`, server.url), {
      method: 'PUT',
      headers: { 'x-forwarded-for': randomIp() },
    })
    assert.equal(german.status, 405)
    const body = await german.text()
    assert.equal(htmlTag(body), '<html lang="de" dir="ltr">')
    assert.match(body, /<h1>Diese Seite nimmt diese Anfrage nicht an<\/h1>/)
    const english = await fetch(new URL(`/t/${t.slug}/sign-in`, server.url), {
      method: 'PUT',
      headers: { 'x-forwarded-for': randomIp() },
    })
    assert.match(await english.text(), /<h1>This page does not take that request<\/h1>/)
  })
})

describe('right to left, regional fallback and the picker on every page', () => {
  test('Arabic: <html lang="ar" dir="rtl">, the page in Arabic, a stylesheet of logical sides', async () => {
    const t = await createTenant(server)
    const c = new PageClient(server, randomIp())
    const page = await c.get(`/t/${t.slug}/sign-in?lang=ar`)
    assert.equal(htmlTag(page.html), '<html lang="ar" dir="rtl">')
    assert.match(page.html, /<h1>تسجيل الدخول إلى /)
    // The layout mirrors only if no rule names a physical side (CSS logical properties).
    const css = await (await fetch(new URL('/assets/pages.css', server.url))).text()
    assert.match(css, /inline-start/)
    assert.doesNotMatch(
      css,
      /(?:margin|padding|border)-(?:left|right)\b|text-align:\s*(?:left|right)|float:\s*(?:left|right)|\b(?:left|right):/,
    )
  })

  test('Accept-Language: pt and pt-PT fall back to pt-BR, zh to zh-CN; Japanese and Korean by name', async () => {
    const t = await createTenant(server)
    const c = new PageClient(server, randomIp())
    for (const [header, locale] of [
      ['pt', 'pt-BR'],
      ['pt-PT, en;q=0.5', 'pt-BR'],
      ['zh-TW', 'zh-CN'],
      ['ja-JP', 'ja'],
      ['ko', 'ko'],
      ['it-CH', 'it'],
      ['nl-BE', 'nl'],
    ]) {
      c.headers['accept-language'] = header
      const page = await c.get(`/t/${t.slug}/sign-in`)
      assert.equal(htmlTag(page.html), `<html lang="${locale}" dir="ltr">`, header)
    }
  })

  test('every page has the picker: labelled, plain links, each language named in itself', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = new PageClient(server, randomIp())
    const pages: string[] = []
    for (const path of ['sign-in', 'sign-up', 'sign-in/code', 'reset-password', 'invite']) {
      pages.push((await c.get(`/t/${t.slug}/${path}?lang=ja`)).html)
    }
    await c.get(`/t/${t.slug}/sign-in`)
    pages.push(
      (await c.post(`/t/${t.slug}/sign-in`, { email: user.email, password: STRONG_PASSWORD })).html,
    )
    const names: Record<string, string> = {
      en: 'English',
      de: 'Deutsch',
      fr: 'Français',
      es: 'Español',
      'pt-BR': 'Português (Brasil)',
      it: 'Italiano',
      nl: 'Nederlands',
      ja: '日本語',
      'zh-CN': '中文（中国）',
      ko: '한국어',
      ar: 'العربية',
    }
    for (const html of pages) {
      assert.equal(htmlTag(html), '<html lang="ja" dir="ltr">')
      const picker = /<nav class="languages" aria-label="言語">[\s\S]*?<\/nav>/.exec(html)?.[0]
      assert.ok(picker, 'a picker labelled in the page’s language')
      for (const [locale, name] of Object.entries(names)) {
        assert.match(
          picker,
          new RegExp(
            `lang="${locale}" hreflang="${locale}"[^>]*>${name.replace(/[()]/g, '\\$&')}</a>`,
          ),
        )
      }
      assert.match(picker, /lang="ja" hreflang="ja" aria-current="true">/)
    }
  })
})
