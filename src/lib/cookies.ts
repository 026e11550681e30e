// Cookies, read and written without Fastify (lib/ imports no framework): the hosted pages,
// the OpenID provider's logout (a Koa response) and the SSO flows all use these, so the
// modules never reach into web/ for them (issue 36, Structure). The request and reply are
// the few members used, which a FastifyRequest and FastifyReply have.
//
// The page session's cookie is named here too (CONTRACT §16): over https
// `__Host-ta_session_{slug}` and `__Host-ta_csrf_{slug}` with `Path=/`, Secure and no
// Domain; over http (development) `ta_session` and `ta_csrf`, scoped to the tenant's pages
// by their path. web/session.ts seals and reads it; oidc/logout.ts removes it.

/** What reading cookies needs of a request. */
export interface CookieRequest {
  headers: { cookie?: string }
}

/** What writing cookies needs of a reply: its Set-Cookie list, read and replaced. */
export interface CookieReply {
  getHeader(name: string): unknown
  header(name: string, value: string[]): unknown
}

/** The request's cookies; for a name sent twice, the first; a value we cannot decode is left out. */
export function readCookies(request: CookieRequest): Record<string, string> {
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

export function setCookie(reply: CookieReply, name: string, value: string, o: CookieOptions) {
  const previous = reply.getHeader('set-cookie')
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)]
  reply.header('set-cookie', [...list, cookieHeader(name, value, o)])
}

export function clearCookie(reply: CookieReply, name: string, o: Omit<CookieOptions, 'maxAge'>) {
  setCookie(reply, name, '', { ...o, maxAge: 0 })
}

/** Where a tenant's page cookies are set: its public URL and its slug. */
export interface PageCookieScope {
  config: { publicUrl: string }
  slug: string
}

/** The path of a tenant's hosted pages. */
export const pagePath = (slug: string) => `/t/${slug}`

const overHttps = (scope: Pick<PageCookieScope, 'config'>) =>
  scope.config.publicUrl.startsWith('https:')

/** The names of the page cookies of `scope`'s tenant. */
export function pageCookieNames(scope: PageCookieScope): { session: string; csrf: string } {
  return overHttps(scope)
    ? { session: `__Host-ta_session_${scope.slug}`, csrf: `__Host-ta_csrf_${scope.slug}` }
    : { session: 'ta_session', csrf: 'ta_csrf' }
}

/** The Path and Secure of the page cookies of `scope`'s tenant. */
export function pageCookieOptions(scope: PageCookieScope): { path: string; secure: boolean } {
  return overHttps(scope)
    ? { path: '/', secure: true }
    : { path: pagePath(scope.slug), secure: false }
}

/**
 * The Set-Cookie value that removes the page session, for a response written outside the
 * pages' plugin (the OpenID provider's logout, oidc/logout.ts).
 */
export function clearedSessionCookie(scope: PageCookieScope): string {
  return cookieHeader(pageCookieNames(scope).session, '', {
    ...pageCookieOptions(scope),
    maxAge: 0,
  })
}
