// The HTTP details of the hosted pages: cookies, the security headers of every page, and
// form bodies. Pages are documents for people, so they get a strict Content-Security-Policy
// (no inline script or style, nothing from elsewhere), may not be framed, and are never
// cached; a form posts `application/x-www-form-urlencoded`, parsed only inside the pages'
// plugin (the JSON API keeps refusing every other media type, CONTRACT §3).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

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

export function readCookies(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {}
  const header = request.headers.cookie
  if (!header) return out
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (!(name in out)) {
      try {
        out[name] = decodeURIComponent(value)
      } catch {
        // A cookie we did not write: ignored.
      }
    }
  }
  return out
}

export interface CookieOptions {
  path: string
  secure: boolean
  maxAge?: number
  /**
   * Lax unless said otherwise. `None` (only with `secure`; Lax without it) for a cookie that
   * must come back with a cross-site POST, as a SAML response does (CONTRACT §12).
   */
  sameSite?: 'Lax' | 'None'
}

/** A Set-Cookie value: HttpOnly and SameSite=Lax (or None, see CookieOptions); Secure when the service is reached over HTTPS. */
export function cookieHeader(name: string, value: string, o: CookieOptions): string {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${o.path}`,
    'HttpOnly',
    o.sameSite === 'None' && o.secure ? 'SameSite=None' : 'SameSite=Lax',
  ]
  if (o.secure) parts.push('Secure')
  if (o.maxAge !== undefined) parts.push(`Max-Age=${o.maxAge}`)
  return parts.join('; ')
}

export function setCookie(reply: FastifyReply, name: string, value: string, o: CookieOptions) {
  const previous = reply.getHeader('set-cookie')
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)]
  reply.header('set-cookie', [...list, cookieHeader(name, value, o)])
}

export function clearCookie(reply: FastifyReply, name: string, o: Omit<CookieOptions, 'maxAge'>) {
  setCookie(reply, name, '', { ...o, maxAge: 0 })
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
