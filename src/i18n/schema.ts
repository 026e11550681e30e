// The locale fields of the API (CONTRACT §20): a user's `locale`, a tenant's `defaultLocale`
// and `locales`. A request names a locale exactly as its catalogue does (`de`, `pt-BR`); any
// other tag, a regional form included, is the `validation` envelope naming the field.
import { Type } from 'typebox'
import { supportedLocales } from './index.ts'

/** A supported locale, as a request sets it. */
export const Locale = Type.Union(
  supportedLocales.map((locale) => Type.Literal(locale)),
  { description: `A supported locale (BCP 47): ${supportedLocales.join(', ')}.` },
)

/** A stored locale, as a response shows it (never refused on the way out). */
export const LocaleOut = Type.String({ description: 'A supported locale (BCP 47).' })
