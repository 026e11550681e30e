// The page session and the forms' CSRF protection.
//
// The page session is the token envelope of a sign-in, sealed (AES-256-GCM under the
// current ENCRYPTION_KEYS entry, bound to the tenant) into an HttpOnly, SameSite=Lax cookie:
// the browser never sees a token, another tenant's pages never receive it, and the service
// stays the one place sessions live (signing out revokes the session, a revoked session's
// cookie stops working within CONTRACT §4's 5 seconds).
//
// CSRF (CONTRACT §16): a random secret per browser in a cookie, and in every form an HMAC,
// under a key derived from the current encryption key, of the tenant, the signed-in
// session's id (`sid`; empty when signed out) and that secret. A request from another site
// cannot read the cookie to make the field, and SameSite=Lax keeps the cookies off its
// cross-site POSTs. A same-site attacker (a sibling subdomain, a plain-http response) can
// plant a secret of its own, but the field for it is bound to the attacker's session, never
// the victim's; and each sign-in and sign-out issues a new secret, so a secret planted
// before sign-in, and the fields of the signed-out pages, stop working.
//
// Cookies: over https `__Host-ta_session_{slug}` and `__Host-ta_csrf_{slug}` with `Path=/`,
// Secure and no Domain, which no other host (a sibling subdomain included) and no plain-http
// response can set; the tenant is in the name so two tenants' pages in one browser keep
// apart. Over http (development) `ta_session` and `ta_csrf`, scoped to the tenant's pages by
// their path (the names and paths: lib/cookies.ts, where the OpenID provider's logout finds
// them too). The flows' own cookies (the provider sign-in mark, the SSO, SAML and idp flows)
// follow the same rule through lib/host-cookie.ts.
import { createHmac } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.ts'
import {
  clearCookie,
  pageCookieNames,
  pageCookieOptions,
  pagePath,
  readCookies,
  setCookie,
} from '../lib/cookies.ts'
import type { FieldCipher } from '../lib/crypto.ts'
import { hashToken, randomToken, safeEqual, subKey } from '../lib/crypto.ts'
import { deviceCookie, deviceTokenOf } from '../lib/host-cookie.ts'
import { sealSignIn, signInCookie } from '../modules/oidc/browser-sign-in.ts'

export interface PageSession {
  accessToken: string
  refreshToken: string
  /** When the access token expires (ms since the epoch). */
  expiresAt: number
  /**
   * How the sign-in was proved (RFC 8176 `amr` values: pwd, otp, hwk, fed, mfa), as the page
   * flow that completed it knows; handed to the OpenID provider as the login's `amr`.
   */
  amr?: string[]
  /**
   * The interaction uid this sign-in was made for (the browser came from its page), which
   * answers `prompt=login`: a sign-in made for another request, or none, does not.
   */
  interaction?: string
  /** The user's `locale` (CONTRACT §20) when it has one, for the pages' negotiation. */
  locale?: string
}

export interface PageContext {
  config: Config
  cipher: FieldCipher
  tenantId: string
  slug: string
}

export { pagePath }

/** The names of the page cookies of a tenant (lib/cookies.ts). */
export const cookieNames = pageCookieNames

const cookieOptions = pageCookieOptions

const overHttps = (ctx: Pick<PageContext, 'config'>) => ctx.config.publicUrl.startsWith('https:')

export function readSession(ctx: PageContext, request: FastifyRequest): PageSession | undefined {
  const sealed = readCookies(request)[cookieNames(ctx).session]
  if (!sealed) return undefined
  try {
    const value = JSON.parse(ctx.cipher.decrypt(sealed, `page-session:${ctx.tenantId}`))
    if (typeof value?.accessToken === 'string' && typeof value?.refreshToken === 'string') {
      const amr = Array.isArray(value.amr)
        ? value.amr.filter((m: unknown) => typeof m === 'string')
        : undefined
      const interaction = isInteractionUid(value.interaction) ? value.interaction : undefined
      const locale = typeof value.locale === 'string' ? value.locale : undefined
      return { ...value, amr, interaction, locale } as PageSession
    }
  } catch {
    // Another tenant's, tampered, or sealed under a retired key: no session.
  }
  return undefined
}

/**
 * Writes the page session's cookie, kept as long as a refresh token lives (30 days; the
 * service decides when it ends). For a refresh of the same session: the CSRF fields stay.
 */
export function writeSession(ctx: PageContext, reply: FastifyReply, session: PageSession): void {
  const sealed = ctx.cipher.encrypt(JSON.stringify(session), `page-session:${ctx.tenantId}`)
  setCookie(reply, cookieNames(ctx).session, sealed, {
    ...cookieOptions(ctx),
    maxAge: 30 * 24 * 3600,
  })
}

/** A sign-in: the page session, and a new browser secret bound to it. */
export function beginSession(
  ctx: PageContext,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
): void {
  writeSession(ctx, reply, session)
  renewBrowserSecret(ctx, request, reply, sessionIdOf(session))
  markProviderSignIn(ctx, reply, sessionIdOf(session))
}

/**
 * Tells the tenant's OpenID provider which service session this browser is signed in with
 * (oidc/browser-sign-in.ts): at each sign-in, and again whenever the hosted pages sign the
 * provider in from the page session, so a page session older than the cookie (or one that
 * outlived it by its refreshes) is followed too.
 */
export function markProviderSignIn(ctx: PageContext, reply: FastifyReply, sessionId: string) {
  const { name, ...where } = signInCookie(ctx.config.publicUrl, ctx.slug)
  setCookie(reply, name, sealSignIn(ctx.cipher, ctx.tenantId, sessionId), {
    ...where,
    maxAge: 30 * 24 * 3600,
  })
}

/** A sign-out (or a session the service ended): no page session, a new browser secret. */
export function clearSession(ctx: PageContext, request: FastifyRequest, reply: FastifyReply) {
  clearCookie(reply, cookieNames(ctx).session, cookieOptions(ctx))
  const { name, ...where } = signInCookie(ctx.config.publicUrl, ctx.slug)
  clearCookie(reply, name, where)
  renewBrowserSecret(ctx, request, reply, '')
}

/**
 * The authorization request a sign-in serves (CONTRACT §11, Sign-in): the page of an OpenID
 * interaction, `/t/{slug}/authorize/{uid}`, sends a browser that must sign in to the sign-in
 * page with this cookie (sealed to the tenant, as long as an interaction lives); whichever
 * method then signs the browser in goes back to that page instead of the account page.
 */
const INTERACTION_TTL = 600

/**
 * A SAML sign-in (CONTRACT §22, modules/samlidp/pending.ts) is carried as an interaction too:
 * its uid is `saml.{id}` (a `.` is never in oidc-provider's uids), and its page is the SAML
 * one, so every way a sign-in ends goes back to it as to an OpenID interaction's page.
 */
export const SAML_INTERACTION = 'saml.'

export const interactionPath = (slug: string, uid: string) =>
  uid.startsWith(SAML_INTERACTION)
    ? `${pagePath(slug)}/saml/${uid.slice(SAML_INTERACTION.length)}`
    : `${pagePath(slug)}/authorize/${uid}`

/** oidc-provider's interaction uids: nanoid, 21 characters of the URL-safe alphabet. */
export const isInteractionUid = (uid: unknown): uid is string =>
  typeof uid === 'string' && /^(saml\.)?[A-Za-z0-9_-]{16,64}$/.test(uid)

const interactionCookie = (ctx: PageContext) =>
  overHttps(ctx) ? `__Host-ta_authorize_${ctx.slug}` : 'ta_authorize'

export function rememberInteraction(
  ctx: PageContext,
  reply: FastifyReply,
  uid: string,
  clientId: string,
): void {
  const sealed = ctx.cipher.encrypt(
    JSON.stringify({ uid, clientId, until: Date.now() + INTERACTION_TTL * 1000 }),
    `interaction:${ctx.tenantId}`,
  )
  setCookie(reply, interactionCookie(ctx), sealed, {
    ...cookieOptions(ctx),
    maxAge: INTERACTION_TTL,
  })
}

export function forgetInteraction(ctx: PageContext, reply: FastifyReply): void {
  clearCookie(reply, interactionCookie(ctx), cookieOptions(ctx))
}

/** The interaction this browser signs in for and its application, or undefined. */
function pendingInteractionOf(
  ctx: PageContext,
  request: FastifyRequest,
): { uid: string; clientId?: string } | undefined {
  const sealed = readCookies(request)[interactionCookie(ctx)]
  if (!sealed) return undefined
  try {
    const value = JSON.parse(ctx.cipher.decrypt(sealed, `interaction:${ctx.tenantId}`))
    if (!isInteractionUid(value?.uid) || typeof value.until !== 'number') return undefined
    if (value.until < Date.now()) return undefined
    const clientId = typeof value.clientId === 'string' ? value.clientId : undefined
    return { uid: value.uid, clientId }
  } catch {
    return undefined
  }
}

/** The uid of the interaction this browser signs in for, or undefined. */
export function pendingInteractionUid(
  ctx: PageContext,
  request: FastifyRequest,
): string | undefined {
  return pendingInteractionOf(ctx, request)?.uid
}

/**
 * The client id of the application this browser signs in for, or undefined: the pages
 * name it to the API, whose UserLogin row records it (CONTRACT §11, Sign-in).
 */
export function pendingInteractionClient(
  ctx: PageContext,
  request: FastifyRequest,
): string | undefined {
  return pendingInteractionOf(ctx, request)?.clientId
}

/**
 * Whether a page request is a step of an OpenID authorization (web/http.ts, PageKind): a
 * route that says so (the interaction and consent pages), or any page of the tenant while
 * this browser signs in for an authorization (a live interaction cookie: at most ten
 * minutes, and forgotten once the interaction page has used the sign-in).
 */
export function servesAuthorization(ctx: PageContext, request: FastifyRequest): boolean {
  return (
    request.routeOptions.config?.authorization === true ||
    pendingInteractionOf(ctx, request) !== undefined
  )
}

/**
 * The page a sign-in goes back to: this tenant's interaction page, built here from the uid
 * alone (never a path the browser sent), or undefined.
 */
export function pendingInteraction(ctx: PageContext, request: FastifyRequest): string | undefined {
  const uid = pendingInteractionUid(ctx, request)
  return uid ? interactionPath(ctx.slug, uid) : undefined
}

/**
 * Every sign-in ends here, whatever proved it (a page's form, a passkey, the identity
 * provider's callback): the page session begins, bound to the interaction it was made for,
 * and the answer is that interaction's page, where the browser goes back to (CONTRACT §11,
 * Sign-in), or undefined: the flow goes on to its own next page. The interaction cookie
 * stays until the interaction page uses the sign-in (authorize.ts forgets it there).
 */
export function completeSignIn(
  ctx: PageContext,
  request: FastifyRequest,
  reply: FastifyReply,
  session: Omit<PageSession, 'interaction'>,
): string | undefined {
  const interaction = pendingInteractionUid(ctx, request)
  beginSession(ctx, request, reply, { ...session, interaction })
  return interaction ? interactionPath(ctx.slug, interaction) : undefined
}

/**
 * The service's session id (`sid`) of a page session, read from its access token. The token
 * came out of our own sealed cookie, so it needs no verification here; the service verifies
 * it on every call. A refresh keeps the `sid`, so the forms of open tabs keep working.
 */
export function sessionIdOf(session: PageSession): string {
  try {
    const claims = JSON.parse(
      Buffer.from(session.accessToken.split('.')[1], 'base64url').toString(),
    )
    if (typeof claims?.sid === 'string' && claims.sid.length > 0) return claims.sid
  } catch {
    // Not a JWT: bound to the token itself below.
  }
  return hashToken(session.accessToken)
}

function csrfKey(config: Config): Buffer {
  return subKey(config.encryptionKeys[0].key, 'hosted-pages-csrf')
}

/** The field for (tenant, session, secret); the parts joined unambiguously (JSON). */
function csrfMac(ctx: PageContext, sessionId: string, secret: string): string {
  return createHmac('sha256', csrfKey(ctx.config))
    .update(JSON.stringify([ctx.tenantId, sessionId, secret]))
    .digest('base64url')
}

/**
 * What this response has changed: a browser secret made here (before the browser has its
 * cookie), and the session the pages drawn in this response belong to (a sign-in or
 * sign-out in this response).
 */
const issued = new WeakMap<FastifyRequest, { secret: string; sessionId?: string }>()

function renewBrowserSecret(
  ctx: PageContext,
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string,
): void {
  const secret = randomToken(32)
  setCookie(reply, cookieNames(ctx).csrf, secret, cookieOptions(ctx))
  issued.set(request, { secret, sessionId })
}

/** The browser's secret as its cookie holds it (what this request was sent with). */
export function browserCookie(ctx: PageContext, request: FastifyRequest): string | undefined {
  const secret = readCookies(request)[cookieNames(ctx).csrf]
  return secret && secret.length >= 32 ? secret : undefined
}

/** This browser's CSRF secret, set as a cookie on first sight. */
function browserSecret(ctx: PageContext, request: FastifyRequest, reply?: FastifyReply) {
  const known = issued.get(request)?.secret ?? browserCookie(ctx, request)
  if (known || !reply) return known
  const secret = randomToken(32)
  setCookie(reply, cookieNames(ctx).csrf, secret, cookieOptions(ctx))
  issued.set(request, { secret })
  return secret
}

/** The session id the forms of this response are bound to ('' when signed out). */
function boundSessionId(ctx: PageContext, request: FastifyRequest): string {
  const changed = issued.get(request)?.sessionId
  if (changed !== undefined) return changed
  const session = readSession(ctx, request)
  return session ? sessionIdOf(session) : ''
}

/** The form field for this browser and its page session. */
export function csrfToken(ctx: PageContext, request: FastifyRequest, reply: FastifyReply): string {
  const secret = browserSecret(ctx, request, reply) as string
  return csrfMac(ctx, boundSessionId(ctx, request), secret)
}

/** The field checked against what the request arrived with: its secret and its session. */
export function csrfValid(ctx: PageContext, request: FastifyRequest, field: unknown): boolean {
  const secret = browserCookie(ctx, request)
  if (!secret || typeof field !== 'string' || field.length === 0) return false
  const session = readSession(ctx, request)
  return safeEqual(csrfMac(ctx, session ? sessionIdOf(session) : '', secret), field)
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

const deviceCookieOf = (ctx: Pick<PageContext, 'config' | 'slug'>) =>
  deviceCookie(ctx.config.publicUrl, ctx.slug)

/** The browser's remembered-device token (lib/host-cookie.ts), if it has one. */
export const rememberedDeviceOf = (
  ctx: Pick<PageContext, 'config' | 'slug'>,
  request: FastifyRequest,
): string | undefined => deviceTokenOf(readCookies(request), ctx.config.publicUrl, ctx.slug)

/** Keeps a new device token for `days` days. */
export function keepDeviceToken(
  ctx: Pick<PageContext, 'config' | 'slug'>,
  reply: FastifyReply,
  token: string,
  days: number,
): void {
  const { name, ...where } = deviceCookieOf(ctx)
  setCookie(reply, name, token, { ...where, maxAge: days * 86_400 })
}

/** Drops the browser's device token (the account page's "forget remembered devices"). */
export function dropDeviceToken(ctx: Pick<PageContext, 'config' | 'slug'>, reply: FastifyReply) {
  const { name, ...where } = deviceCookieOf(ctx)
  clearCookie(reply, name, where)
}
