// The HTTP details of the hosted pages: cookies, the security headers of every page, and
// form bodies. Pages are documents for people, so they get a strict Content-Security-Policy
// (no inline script or style, nothing from elsewhere), may not be framed, and are never
// cached; a form posts `application/x-www-form-urlencoded`, parsed only inside the pages'
// plugin (the JSON API keeps refusing every other media type, CONTRACT §3).
import type { FastifyInstance, FastifyReply } from 'fastify'

// The cookie helpers live in lib/ (the modules use them too); the pages import them here.
export {
  type CookieOptions,
  clearCookie,
  cookieHeader,
  readCookies,
  setCookie,
} from '../lib/cookies.ts'

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

/** The headers of every page (the pages oidc-provider draws too: web/provider-page.ts). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // Invitation and reset links carry secrets in the query: never send them on.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
}

export function setPageHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) reply.header(name, value)
}

/** Form fields: each name's last value, as strings; at most 64 fields. */
export type Form = Record<string, string>

/** A form field's value, "" when it is missing. */
export function formText(body: Form | undefined, name: string): string {
  const value = body?.[name]
  return typeof value === 'string' ? value : ''
}

export function installFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_request, body, done) => {
      const form: Form = Object.create(null)
      let count = 0
      for (const [name, value] of new URLSearchParams(body as string)) {
        if (++count > 64) break
        form[name] = value
      }
      done(null, form)
    },
  )
}
