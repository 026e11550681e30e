// The page session and the forms' CSRF protection.
//
// The page session is the token envelope of a sign-in, sealed (AES-256-GCM under the
// current ENCRYPTION_KEYS entry, bound to the tenant) into an HttpOnly, SameSite=Lax cookie
// whose path is the tenant's pages: the browser never sees a token, another tenant's pages
// never receive it, and the service stays the one place sessions live (signing out revokes
// the session, a revoked session's cookie stops working within CONTRACT §4's 5 seconds).
//
// CSRF: a random `csrf` cookie per browser, and in every form its HMAC under a key derived
// from the current encryption key (a signed double submit). A request from another site
// cannot read the cookie to make the field, and SameSite=Lax already keeps the cookies off
// its cross-site POSTs.
import { createHmac, hkdfSync } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.ts'
import type { FieldCipher } from '../lib/crypto.ts'
import { randomToken, safeEqual } from '../lib/crypto.ts'
import { clearCookie, readCookies, setCookie } from './http.ts'

export const SESSION_COOKIE = 'ta_session'
export const CSRF_COOKIE = 'ta_csrf'

export interface PageSession {
  accessToken: string
  refreshToken: string
  /** When the access token expires (ms since the epoch). */
  expiresAt: number
}

export interface PageContext {
  config: Config
  cipher: FieldCipher
  tenantId: string
  slug: string
}

export const pagePath = (slug: string) => `/t/${slug}`

function cookieOptions(ctx: PageContext) {
  return { path: pagePath(ctx.slug), secure: ctx.config.publicUrl.startsWith('https:') }
}

export function readSession(ctx: PageContext, request: FastifyRequest): PageSession | undefined {
  const sealed = readCookies(request)[SESSION_COOKIE]
  if (!sealed) return undefined
  try {
    const value = JSON.parse(ctx.cipher.decrypt(sealed, `page-session:${ctx.tenantId}`))
    if (typeof value?.accessToken === 'string' && typeof value?.refreshToken === 'string') {
      return value as PageSession
    }
  } catch {
    // Another tenant's, tampered, or sealed under a retired key: no session.
  }
  return undefined
}

/** Kept as long as a refresh token lives (30 days); the service decides when it ends. */
export function writeSession(ctx: PageContext, reply: FastifyReply, session: PageSession): void {
  const sealed = ctx.cipher.encrypt(JSON.stringify(session), `page-session:${ctx.tenantId}`)
  setCookie(reply, SESSION_COOKIE, sealed, { ...cookieOptions(ctx), maxAge: 30 * 24 * 3600 })
}

export function clearSession(ctx: PageContext, reply: FastifyReply): void {
  clearCookie(reply, SESSION_COOKIE, cookieOptions(ctx))
}

const derived = new WeakMap<Buffer, Buffer>()

function csrfKey(config: Config): Buffer {
  const key = config.encryptionKeys[0].key
  let out = derived.get(key)
  if (!out) {
    out = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'hosted-pages-csrf', 32))
    derived.set(key, out)
  }
  return out
}

function csrfMac(ctx: PageContext, secret: string): string {
  return createHmac('sha256', csrfKey(ctx.config))
    .update(`${ctx.tenantId}:${secret}`)
    .digest('base64url')
}

/** A secret made in this response, before the browser has its cookie. */
const issued = new WeakMap<FastifyRequest, string>()

/** This browser's CSRF secret, set as a cookie on first sight. */
function browserSecret(ctx: PageContext, request: FastifyRequest, reply?: FastifyReply) {
  const known = issued.get(request) ?? readCookies(request)[CSRF_COOKIE]
  if ((known && known.length >= 32) || !reply) return known
  const secret = randomToken(32)
  setCookie(reply, CSRF_COOKIE, secret, cookieOptions(ctx))
  issued.set(request, secret)
  return secret
}

/** The form field for this browser. */
export function csrfToken(ctx: PageContext, request: FastifyRequest, reply: FastifyReply): string {
  return csrfMac(ctx, browserSecret(ctx, request, reply) as string)
}

export function csrfValid(ctx: PageContext, request: FastifyRequest, field: unknown): boolean {
  const secret = readCookies(request)[CSRF_COOKIE]
  if (!secret || typeof field !== 'string' || field.length === 0) return false
  return safeEqual(csrfMac(ctx, secret), field)
}

/**
 * A sign-in waiting for its second factor: the email and password sealed into the form for
 * five minutes, bound to the tenant and this browser's CSRF secret, so the password is
 * never stored and the blob is useless anywhere else or later.
 */
export function sealPending<T extends object>(
  ctx: PageContext,
  request: FastifyRequest,
  reply: FastifyReply,
  data: T,
): string {
  // The form may be this browser's first: its CSRF secret is made here if need be.
  const secret = browserSecret(ctx, request, reply) ?? ''
  // Sealed again at each step, but never for longer than five minutes from the first.
  const until = (data as { until?: number }).until ?? Date.now() + 5 * 60_000
  const body = JSON.stringify({ ...data, until })
  return ctx.cipher.encrypt(body, `pending:${ctx.tenantId}:${secret}`)
}

export function openPending<T>(
  ctx: PageContext,
  request: FastifyRequest,
  sealed: unknown,
): T | undefined {
  if (typeof sealed !== 'string' || sealed.length === 0 || sealed.length > 4096) return undefined
  const secret = browserSecret(ctx, request) ?? ''
  try {
    const value = JSON.parse(ctx.cipher.decrypt(sealed, `pending:${ctx.tenantId}:${secret}`))
    if (typeof value?.until !== 'number' || value.until < Date.now()) return undefined
    return value as T
  } catch {
    return undefined
  }
}
