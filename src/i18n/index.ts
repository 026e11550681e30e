// The hosted pages' languages (CONTRACT §20): one catalogue per locale
// (`locales/{locale}.json`, keys → ICU MessageFormat strings), read once at start, each
// message compiled once per locale and key (intl-messageformat, FormatJS), and the locale of
// a request negotiated in the contract's order.
import { readdirSync, readFileSync } from 'node:fs'
import { IntlMessageFormat } from 'intl-messageformat'
import type en from './locales/en.json'

/** A key of the catalogues (en.json is the reference: every other catalogue has its keys). */
export type MessageKey = keyof typeof en
export type MessageValues = Record<string, string | number | Date>
/** A translator bound to one locale. */
export type Translate = (key: MessageKey, values?: MessageValues) => string

export const DEFAULT_LOCALE = 'en'
const RIGHT_TO_LEFT = new Set(['ar', 'fa', 'he', 'ur'])

const directory = new URL('./locales/', import.meta.url)

/** Every catalogue by locale, read once. */
export const catalogues: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(
  readdirSync(directory)
    .filter((file) => file.endsWith('.json'))
    .map((file) => [
      file.slice(0, -'.json'.length),
      JSON.parse(readFileSync(new URL(file, directory), 'utf8')) as Record<string, string>,
    ]),
)

/** The locales the service has a catalogue for, the default first. */
export const supportedLocales: readonly string[] = [
  DEFAULT_LOCALE,
  ...[...catalogues.keys()].filter((l) => l !== DEFAULT_LOCALE).sort(),
]

const compiled = new Map<string, IntlMessageFormat>()

function message(locale: string, key: string): IntlMessageFormat {
  const id = `${locale}\u0000${key}`
  let format = compiled.get(id)
  if (!format) {
    const source = catalogues.get(locale)?.[key] ?? catalogues.get(DEFAULT_LOCALE)?.[key]
    if (source === undefined) throw new Error(`i18n: no message ${key}`)
    format = new IntlMessageFormat(source, locale)
    compiled.set(id, format)
  }
  return format
}

/** The translator for `locale` (one the service supports; else the default's). */
export function translator(locale: string): Translate {
  const known = catalogues.has(locale) ? locale : DEFAULT_LOCALE
  return (key, values) => String(message(known, key).format(values))
}

/**
 * The locales a tenant offers (CONTRACT §20): its `locales` in the service's order, those
 * the service still has a catalogue for; every supported one when it named none (null).
 */
export function offeredLocales(locales: readonly string[] | null | undefined): string[] {
  if (!locales) return [...supportedLocales]
  const offered = supportedLocales.filter((l) => locales.includes(l))
  return offered.length > 0 ? offered : [DEFAULT_LOCALE]
}

export const dir = (locale: string): 'rtl' | 'ltr' =>
  RIGHT_TO_LEFT.has(locale.split('-')[0]?.toLowerCase() ?? '') ? 'rtl' : 'ltr'

/**
 * The supported locale that best matches one BCP 47 tag: the exact tag (case-insensitive),
 * else its language alone (`pt-BR` → `pt`), else a supported regional form of that language
 * (`pt` → `pt-BR`); undefined when none.
 */
export function match(tag: string, available: readonly string[] = supportedLocales) {
  const wanted = tag.trim().toLowerCase()
  if (!wanted || wanted === '*') return undefined
  const exact = available.find((l) => l.toLowerCase() === wanted)
  if (exact) return exact
  const language = wanted.split('-')[0]
  return (
    available.find((l) => l.toLowerCase() === language) ??
    available.find((l) => l.toLowerCase().split('-')[0] === language)
  )
}

/** An Accept-Language header's tags, best first (q=0 left out). */
export function acceptLanguage(header: string | undefined): string[] {
  if (!header) return []
  return header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';')
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
      const quality = q ? Number(q.slice(2)) : 1
      return { tag: tag.trim(), quality: Number.isFinite(quality) ? quality : 0, index }
    })
    .filter((entry) => entry.tag && entry.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.index - b.index)
    .map((entry) => entry.tag)
}

export interface LocaleSources {
  /** The OIDC request's `ui_locales` (space-separated tags, best first). */
  uiLocales?: string
  /** The `lang` query parameter. */
  query?: string
  /** The `lang` cookie (a `lang` once chosen). */
  cookie?: string
  /** The signed-in user's `locale`. */
  user?: string | null
  acceptLanguage?: string
  /** The tenant's `defaultLocale` (`en` unless it chose another). */
  tenantDefault?: string
  /** The tenant's `locales` (default: every supported one). */
  available?: readonly string[]
}

/**
 * The locale of a request, the first of (CONTRACT §20): `ui_locales`, `lang` (query, then its
 * cookie), the user's `locale`, `Accept-Language`, the tenant's default; each source's
 * tags matched against the available locales, a tag that matches none passed over.
 */
export function negotiate(sources: LocaleSources): string {
  const available = sources.available ?? supportedLocales
  const candidates = [
    ...(sources.uiLocales?.split(/\s+/) ?? []),
    sources.query,
    sources.cookie,
    sources.user,
    ...acceptLanguage(sources.acceptLanguage),
  ]
  for (const tag of candidates) {
    const found = tag ? match(tag, available) : undefined
    if (found) return found
  }
  return match(sources.tenantDefault ?? DEFAULT_LOCALE, available) ?? available[0] ?? DEFAULT_LOCALE
}

/** Each supported locale's name in its own language, for the language picker. */
export function localeName(locale: string): string {
  const name = new Intl.DisplayNames([locale], { type: 'language' }).of(locale) ?? locale
  return name.slice(0, 1).toLocaleUpperCase(locale) + name.slice(1)
}
