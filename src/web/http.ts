// The HTTP details of the hosted pages: cookies, the security headers of every page, and
// form bodies. Pages are documents for people, so they get a strict Content-Security-Policy
// (no inline script or style, nothing from elsewhere), may not be framed, and are never
// cached; a form posts `application/x-www-form-urlencoded`, parsed only inside the pages'
// plugin (the JSON API keeps refusing every other media type, CONTRACT §3).
import type { FastifyInstance } from 'fastify'
import { captchaCsp, type PageCaptcha } from './captcha.ts'

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

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A page of the OpenID authorization itself (`/t/{slug}/authorize/…`): see PageKind. */
    authorization?: boolean
  }
}

/** The options of a route that is a step of an OpenID authorization (PageKind). */
export const AUTHORIZATION_STEP = { config: { authorization: true } } as const

/**
 * What a page's headers depend on. `authorization`: the page is a step an application's
 * OpenID request passes through (the provider's own answers and pages, the interaction and
 * consent pages, and every hosted page while this browser signs in for an authorization),
 * which an application may run in a popup (oidc-client-ts's signinPopup, MSAL's and
 * Auth0's popups) whose callback page hands the answer to `window.opener`.
 */
export interface PageKind {
  authorization: boolean
}

/**
 * Cross-Origin-Opener-Policy (docs/security-model.md, "Popups and window.opener"):
 * `same-origin` puts a page that a window of another origin opened into a browsing context
 * group of its own, and `window.opener` is null from then on, for every page the popup
 * loads afterwards (the application's callback included). So the steps of an authorization
 * send `unsafe-none` (the application that opened the popup, and only it, keeps its
 * reference), the other pages `same-origin`. `same-origin-allow-popups` would not help: it
 * is the opener's policy, and the popup's pages are ours. Framing stays refused on every
 * page (X-Frame-Options, frame-ancestors), so clickjacking is unaffected.
 */
export const openerPolicy = (kind: PageKind) => (kind.authorization ? 'unsafe-none' : 'same-origin')

/**
 * The headers of every page (the pages oidc-provider draws too: web/provider-page.ts); a
 * page with a CAPTCHA widget opens its CSP to that provider alone (web/captcha.ts).
 */
export function pageHeaders(
  kind: PageKind,
  captcha?: PageCaptcha,
): Readonly<Record<string, string>> {
  return {
    'content-security-policy': captchaCsp(CSP, captcha),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    // Invitation and reset links carry secrets in the query: never send them on.
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'cross-origin-opener-policy': openerPolicy(kind),
  }
}

/** The pages' headers on a reply. */
export function setPageHeaders(
  reply: { header(name: string, value: string): unknown },
  kind: PageKind,
  captcha?: PageCaptcha,
): void {
  for (const [name, value] of Object.entries(pageHeaders(kind, captcha))) reply.header(name, value)
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
