// The catalogues (every locale has en's keys, each message parses with the same
// placeholders; every key is used in code and every key used exists) and the negotiation
// order of CONTRACT §20.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { IntlMessageFormat } from 'intl-messageformat'
import {
  acceptLanguage,
  catalogues,
  DEFAULT_LOCALE,
  dir,
  match,
  negotiate,
  supportedLocales,
  translator,
} from './index.ts'

const en = catalogues.get(DEFAULT_LOCALE) ?? {}

interface AstNode {
  type: number
  value?: string
  options?: Record<string, { value: AstNode[] }>
  children?: AstNode[]
}

/** The placeholder (and tag) names of a message, sorted. */
function placeholders(source: string, locale: string): string[] {
  const names = new Set<string>()
  const walk = (nodes: AstNode[]) => {
    for (const node of nodes) {
      // 0 literal and 7 pound carry no name; the rest (argument, number, date, time,
      // select, plural, tag) do.
      if (node.type !== 0 && node.type !== 7 && node.value) names.add(node.value)
      for (const option of Object.values(node.options ?? {})) walk(option.value)
      if (node.children) walk(node.children)
    }
  }
  walk(new IntlMessageFormat(source, locale).getAst() as AstNode[])
  return [...names].sort()
}

function sourceFiles(dirPath: string): string[] {
  return readdirSync(dirPath, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name))
}

describe('catalogues', () => {
  test('every locale has exactly en’s keys, each message parses with en’s placeholders', () => {
    assert.ok(Object.keys(en).length > 0)
    assert.ok(catalogues.size >= 3, 'en, de and fr at least')
    assert.deepEqual(
      placeholders('{n, plural, one {# <b>{who}</b>} other {#}} {when, date}', 'en'),
      ['b', 'n', 'when', 'who'],
    )
    for (const [locale, catalogue] of catalogues) {
      assert.deepEqual(Object.keys(catalogue).sort(), Object.keys(en).sort(), locale)
      for (const [key, source] of Object.entries(catalogue)) {
        assert.equal(typeof source, 'string', `${locale} ${key}`)
        assert.ok(source.trim(), `${locale} ${key} is empty`)
        assert.deepEqual(
          placeholders(source, locale),
          placeholders(en[key] ?? '', 'en'),
          `${locale} ${key}`,
        )
      }
    }
  })

  test('every key used in code is in en.json, and every key in en.json is used', () => {
    const code = sourceFiles(join(import.meta.dirname, '..'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n')
    const used = new Set([...code.matchAll(/\bt\(\s*'([A-Za-z0-9_.]+)'/g)].map((m) => m[1]))
    assert.ok(used.size > 0)
    for (const key of used) assert.ok(key in en, `${key} is used but not in en.json`)
    for (const key of Object.keys(en)) {
      assert.ok(code.includes(`'${key}'`), `${key} is in en.json but used nowhere`)
    }
  })

  test('a message is formatted with its values, in the locale asked for', () => {
    assert.equal(translator('en')('signIn.heading', { tenant: 'Acme' }), 'Sign in to Acme')
    assert.equal(translator('de')('signIn.heading', { tenant: 'Acme' }), 'Bei Acme anmelden')
    // A locale without a catalogue: the default's.
    assert.equal(translator('xx')('signIn.heading', { tenant: 'Acme' }), 'Sign in to Acme')
  })
})

describe('negotiation', () => {
  const available = ['en', 'de', 'fr', 'pt', 'pt-BR', 'ar']

  test('Accept-Language: by quality, then order; q=0 and blanks left out', () => {
    assert.deepEqual(acceptLanguage('fr;q=0.5, de, en;q=0.9, ja;q=0, *;q=0.1'), [
      'de',
      'en',
      'fr',
      '*',
    ])
    assert.deepEqual(acceptLanguage(undefined), [])
    assert.deepEqual(acceptLanguage(' , ;q=1'), [])
  })

  test('best match: the exact tag, then its language, then a regional form', () => {
    assert.equal(match('pt-BR', available), 'pt-BR')
    assert.equal(match('PT-br', available), 'pt-BR')
    assert.equal(match('pt-PT', available), 'pt')
    assert.equal(match('de-AT', available), 'de')
    assert.equal(match('pt-BR', ['en', 'pt']), 'pt')
    assert.equal(match('pt', ['en', 'pt-BR']), 'pt-BR')
    assert.equal(match('ja', available), undefined)
    assert.equal(match('*', available), undefined)
  })

  test('the order: ui_locales, lang, its cookie, the user, Accept-Language, the default', () => {
    const all = {
      uiLocales: 'ja fr',
      query: 'de',
      cookie: 'ar',
      user: 'pt',
      acceptLanguage: 'pt-BR',
      available,
    }
    assert.equal(negotiate(all), 'fr', 'the first ui_locales tag available')
    assert.equal(negotiate({ ...all, uiLocales: undefined }), 'de')
    assert.equal(negotiate({ ...all, uiLocales: undefined, query: undefined }), 'ar')
    assert.equal(negotiate({ ...all, uiLocales: 'ja', query: 'xx', cookie: undefined }), 'pt')
    assert.equal(negotiate({ acceptLanguage: 'ja, pt-BR;q=0.8', available }), 'pt-BR')
    assert.equal(negotiate({ acceptLanguage: 'ja', available }), 'en')
    assert.equal(negotiate({ acceptLanguage: 'ja', tenantDefault: 'de', available }), 'de')
    assert.equal(negotiate({}), DEFAULT_LOCALE)
  })

  test('a locale the tenant does not offer is never chosen', () => {
    assert.equal(negotiate({ query: 'de', acceptLanguage: 'fr', available: ['en', 'fr'] }), 'fr')
    assert.equal(negotiate({ query: 'de', tenantDefault: 'de', available: ['fr'] }), 'fr')
  })

  test('right to left for Arabic, left to right otherwise', () => {
    assert.equal(dir('ar'), 'rtl')
    assert.equal(dir('ar-EG'), 'rtl')
    assert.equal(dir('de'), 'ltr')
    assert.equal(supportedLocales[0], DEFAULT_LOCALE)
  })
})
