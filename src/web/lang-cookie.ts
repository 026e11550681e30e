// The cookie that remembers a language chosen with a page's picker (`?lang=`, CONTRACT §20)
// and the locale of a request drawn without the pages' context (an SSO refusal, an error
// before a page could be drawn). Like the pages' other cookies (CONTRACT §16) it is
// `__Host-ta_lang_{slug}` at `/` over https and `ta_lang` scoped to the tenant's pages over
// http (lib/host-cookie.ts).
import type { FastifyRequest } from 'fastify'
import { negotiate, offeredLocales } from '../i18n/index.ts'
import { readCookies } from '../lib/cookies.ts'
import { hostCookie } from '../lib/host-cookie.ts'
import { pagePath } from './session.ts'

export const LANG_COOKIE_BASE = 'ta_lang'

/** The `lang` cookie's name for the tenant `slug`. */
export function langCookieName(publicUrl: string, slug: string): string {
  return hostCookie(publicUrl, LANG_COOKIE_BASE, [slug], pagePath(slug)).name
}

/**
 * The remembered `lang` in a Cookie header, when the service's own scheme is not known
 * (the pages oidc-provider draws): the tenant's `__Host-` cookie, else the plain one.
 */
export function rememberedLang(cookieHeader: string | undefined, slug: string | undefined) {
  const cookies = readCookies({ headers: { cookie: cookieHeader } })
  return (slug ? cookies[`__Host-${LANG_COOKIE_BASE}_${slug}`] : undefined) ?? cookies.ta_lang
}

export interface LocaleTenant {
  slug: string
  locales: string[] | null
  defaultLocale: string
}

/**
 * The locale of a request with no page session to read (CONTRACT §20's order without the
 * user): `?lang=`, its cookie, Accept-Language, the tenant's default; among the tenant's
 * locales, or every supported one when no tenant is known.
 */
export function requestLocale(
  request: FastifyRequest,
  publicUrl: string,
  tenant?: LocaleTenant,
): string {
  const query = (request.query ?? {}) as Record<string, unknown>
  return negotiate({
    query: typeof query.lang === 'string' ? query.lang : undefined,
    cookie: tenant ? readCookies(request)[langCookieName(publicUrl, tenant.slug)] : undefined,
    acceptLanguage: request.headers['accept-language'],
    tenantDefault: tenant?.defaultLocale,
    available: offeredLocales(tenant?.locales),
  })
}
