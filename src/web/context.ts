// What every page handler needs for one request: the tenant and its brand, the CSRF field,
// the API client, the page session (refreshed when its access token is about to expire),
// and the way a page is sent.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { match, negotiate, offeredLocales, type Translate, translator } from '../i18n/index.ts'
import { pageCookieOptions, readCookies, setCookie } from '../lib/cookies.ts'
import { hashToken } from '../lib/crypto.ts'
import { tenantHasLogo } from '../modules/tenants/service.ts'
import { AuthServiceError, apiFor } from './api.ts'
import { brandingCsp } from './branding.ts'
import { type Html, html } from './html.ts'
import { type PageKind, setPageHeaders } from './http.ts'
import { langCookieName } from './lang-cookie.ts'
import { type Brand, type PageOptions, page } from './layout.ts'
import {
  browserCookie,
  clearSession,
  completeSignIn,
  csrfToken,
  csrfValid,
  type PageContext,
  type PageSession,
  pagePath,
  pendingInteraction,
  pendingInteractionClient,
  readSession,
  servesAuthorization,
  writeSession,
} from './session.ts'

export type PageDeps = Pick<
  Deps,
  | 'config'
  | 'cipher'
  | 'db'
  | 'tokens'
  | 'revocations'
  | 'clock'
  | 'audit'
  | 'providerPages'
  | 'sessions'
  | 'ssoPages'
  // The magic-link request (CONTRACT §20), which the pages make in process: its budgets,
  // its CAPTCHA and its mail.
  | 'limits'
  | 'mailer'
  | 'spentCaptchas'
>

/** How long the cookie that remembers a `lang` chosen with the picker lives (lang-cookie.ts). */
const LANG_COOKIE_SECONDS = 365 * 24 * 3600

/** Each request's negotiated locale, resolved once. */
const locales = new WeakMap<FastifyRequest, string>()
/** The requests whose `lang` was already considered for the cookie. */
const remembered = new WeakSet<FastifyRequest>()

export interface TokenEnvelope {
  accessToken: string
  refreshToken: string
  accessTokenExpiresIn: number
  /** The user the tokens are for: its `locale` is kept in the page session. */
  user?: { locale?: string | null }
}

export class Pages {
  readonly app: FastifyInstance
  readonly deps: PageDeps
  /** Refreshes in flight or just done, by the SHA-256 of the refresh token spent. */
  private readonly refreshing = new Map<
    string,
    { envelope: Promise<TokenEnvelope>; until: number }
  >()
  constructor(app: FastifyInstance, deps: PageDeps) {
    this.app = app
    this.deps = deps
  }

  ctx(request: FastifyRequest): PageContext {
    const { tenant } = request
    return {
      config: this.deps.config,
      cipher: this.deps.cipher,
      tenantId: tenant.id,
      slug: tenant.slug,
    }
  }

  /** `/t/{slug}/{rest}` */
  url(request: FastifyRequest, rest = ''): string {
    return `${pagePath(request.tenant.slug)}/${rest}`
  }

  /** The name of the cookie that remembers the picker's `lang` (lang-cookie.ts). */
  private langCookie(request: FastifyRequest): string {
    return langCookieName(this.deps.config.publicUrl, request.tenant.slug)
  }

  /** The locales the request's tenant offers (CONTRACT §20: default every supported one). */
  offered(request: FastifyRequest): string[] {
    return offeredLocales(request.tenant.locales)
  }

  /**
   * The request's locale (CONTRACT §20, i18n/index.ts `negotiate`), resolved once per
   * request, among the tenant's `locales`, falling back to its `defaultLocale`. A `lang`
   * query parameter naming an offered locale is remembered in a cookie when a reply is
   * given. `ui_locales` is read from the query of the page request (the interaction page
   * remembers the OpenID request's own, `useUiLocales`). The signed-in user's `locale` is
   * the one the page session holds (taken from the token envelope at sign-in and at each
   * refresh, and written by the account page's language form).
   */
  locale(request: FastifyRequest, reply?: FastifyReply): string {
    let locale = locales.get(request)
    const query = (request.query ?? {}) as Record<string, unknown>
    const lang = typeof query.lang === 'string' ? query.lang : undefined
    const cookie = readCookies(request)[this.langCookie(request)]
    const available = this.offered(request)
    if (!locale) {
      locale = negotiate({
        uiLocales: typeof query.ui_locales === 'string' ? query.ui_locales : undefined,
        query: lang,
        cookie,
        user: readSession(this.ctx(request), request)?.locale,
        acceptLanguage: request.headers['accept-language'],
        tenantDefault: request.tenant.defaultLocale,
        available,
      })
      locales.set(request, locale)
    }
    // Remembered once per request, by the first call that has the reply.
    if (reply && !remembered.has(request) && lang !== undefined) {
      remembered.add(request)
      if (match(lang, available) === locale && cookie !== locale) {
        setCookie(reply, this.langCookie(request), locale, {
          ...pageCookieOptions(this.ctx(request)),
          maxAge: LANG_COOKIE_SECONDS,
        })
      }
    }
    return locale
  }

  /**
   * The OpenID request's `ui_locales` (read on the interaction page): its first supported
   * tag becomes the request's locale, and is remembered in the `lang` cookie so the pages of
   * the sign-in that follow (sign-in, second factor, consent) speak it too.
   */
  useUiLocales(request: FastifyRequest, reply: FastifyReply, uiLocales: unknown): void {
    if (typeof uiLocales !== 'string') return
    const available = this.offered(request)
    const found = uiLocales
      .split(/\s+/)
      .map((tag) => match(tag, available))
      .find((locale) => locale !== undefined)
    if (!found) return
    locales.set(request, found)
    if (readCookies(request)[this.langCookie(request)] !== found) {
      setCookie(reply, this.langCookie(request), found, {
        ...pageCookieOptions(this.ctx(request)),
        maxAge: LANG_COOKIE_SECONDS,
      })
    }
  }

  /**
   * The user's `locale` just set (the account page): kept in the page session, and the
   * `lang` cookie, which negotiation puts before it, set to it too (cleared when none).
   */
  rememberUserLocale(
    request: FastifyRequest,
    reply: FastifyReply,
    session: PageSession,
    locale: string | undefined,
  ): void {
    writeSession(this.ctx(request), reply, { ...session, locale })
    const cookie = readCookies(request)[this.langCookie(request)]
    if (cookie === undefined || cookie === locale) return
    setCookie(reply, this.langCookie(request), locale ?? '', {
      ...pageCookieOptions(this.ctx(request)),
      maxAge: locale ? LANG_COOKIE_SECONDS : 0,
    })
  }

  /** The translator for the request's locale, for a page's strings. */
  t(request: FastifyRequest, reply?: FastifyReply): Translate {
    return translator(this.locale(request, reply))
  }

  async brand(request: FastifyRequest, reply?: FastifyReply): Promise<Brand> {
    const { tenant } = request
    const hasLogo = await tenantHasLogo(this.deps, tenant.id)
    return {
      tenant,
      logoUrl: hasLogo ? `/v1/${tenant.slug}/logo` : undefined,
      branding: tenant.branding,
      locale: this.locale(request, reply),
      locales: this.offered(request),
      path: request.url,
    }
  }

  /** What the page's headers depend on (web/http.ts): whether it is a step of an authorization. */
  kind(request: FastifyRequest): PageKind {
    return { authorization: servesAuthorization(this.ctx(request), request) }
  }

  csrf(request: FastifyRequest, reply: FastifyReply): string {
    return csrfToken(this.ctx(request), request, reply)
  }

  csrfValid(request: FastifyRequest): boolean {
    const field = (request.body as Record<string, unknown> | undefined)?._csrf
    return csrfValid(this.ctx(request), request, field)
  }

  api(request: FastifyRequest, token?: string) {
    const served = pendingInteractionClient(this.ctx(request), request)
    return apiFor(this.app, request, request.tenant.slug, token, served, this.locale(request))
  }

  async send(
    request: FastifyRequest,
    reply: FastifyReply,
    title: string,
    body: Html,
    options: PageOptions & { status?: number; formTargets?: string[] } = {},
  ): Promise<FastifyReply> {
    setPageHeaders(reply, this.kind(request), options.captcha)
    // CONTRACT §20: the tenant's dark logo and favicon are images of its own origins.
    if (request.tenant.branding) {
      const csp = String(reply.getHeader('content-security-policy'))
      reply.header('content-security-policy', brandingCsp(csp, request.tenant.branding))
    }
    // A page whose form posts to another site (the SAML response to an SP's ACS): the CSP's
    // form-action names that origin too, and nothing else.
    if (options.formTargets?.length) {
      reply.header(
        'content-security-policy',
        String(reply.getHeader('content-security-policy')).replace(
          "form-action 'self'",
          `form-action 'self' ${options.formTargets.join(' ')}`,
        ),
      )
    }
    const markup = page(await this.brand(request, reply), title, body, options)
    return reply
      .code(options.status ?? 200)
      .type('text/html; charset=utf-8')
      .send(markup.value)
  }

  /** 303 to another page of the tenant (after a POST, so a reload does not post again). */
  redirect(request: FastifyRequest, reply: FastifyReply, rest: string): FastifyReply {
    setPageHeaders(reply, this.kind(request))
    return reply.redirect(this.url(request, rest), 303)
  }

  /**
   * A sign-in: the page session, and new CSRF fields bound to it (session.ts). `amr` says how
   * it was proved (RFC 8176), for the OpenID provider's ID tokens. Answers the page of the
   * OpenID interaction the sign-in serves, if any (`completeSignIn`).
   */
  startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    envelope: TokenEnvelope,
    amr: string[],
  ): string | undefined {
    return completeSignIn(this.ctx(request), request, reply, { ...readSessionFrom(envelope), amr })
  }

  /**
   * On to `target` (a path of this service) after a form: a page that goes there by
   * itself. A 303 would do for the service's own pages, but the chain from there may end
   * at an application's redirect URI, which the CSP's form-action ('self') forbids to the
   * redirects that answer a form.
   */
  continueTo(request: FastifyRequest, reply: FastifyReply, target: string) {
    const t = this.t(request, reply)
    const body = html`<h1>${t('continue.heading')}</h1>
<p><a class="button primary" href="${target}">${t('continue.link')}</a></p>`
    return this.send(request, reply, t('continue.title'), body, { refreshTo: target })
  }

  /**
   * Where a browser goes once signed in: back to the authorization request it came from
   * (session.ts, `pendingInteraction`), else `/t/{slug}/{rest}`.
   */
  afterSignIn(request: FastifyRequest, rest: string): string {
    return pendingInteraction(this.ctx(request), request) ?? this.url(request, rest)
  }

  endSession(request: FastifyRequest, reply: FastifyReply): void {
    clearSession(this.ctx(request), request, reply)
  }

  /**
   * Refreshes, once per refresh token and browser on this instance: two page loads of one
   * browser at the same moment (two tabs, a prefetch) would otherwise both spend the
   * token, and the service would rightly end the session as a reuse. The answer is kept
   * 30 s for a request that arrives just after with the old cookie; it is keyed by the
   * browser's CSRF secret too, so a replay of the old token from elsewhere still reaches
   * the service (and its reuse detection).
   */
  private refreshOnce(request: FastifyRequest, refreshToken: string): Promise<TokenEnvelope> {
    const key = hashToken(`${browserCookie(this.ctx(request), request) ?? ''}:${refreshToken}`)
    const now = Date.now()
    const known = this.refreshing.get(key)
    if (known && known.until > now) return known.envelope
    for (const [k, entry] of this.refreshing) if (entry.until <= now) this.refreshing.delete(k)
    const envelope = this.api(request).refreshSession({
      body: { refreshToken },
    }) as Promise<TokenEnvelope>
    this.refreshing.set(key, { envelope, until: now + 30_000 })
    envelope.catch(() => this.refreshing.delete(key))
    return envelope
  }

  /**
   * The signed-in page session, its access token refreshed when it has less than a minute
   * left; undefined (and the cookie cleared) when there is none or the service ended it.
   */
  async session(request: FastifyRequest, reply: FastifyReply): Promise<PageSession | undefined> {
    const ctx = this.ctx(request)
    const session = readSession(ctx, request)
    if (!session) return undefined
    if (session.expiresAt - Date.now() > 60_000) return session
    try {
      const envelope = await this.refreshOnce(request, session.refreshToken)
      // The same session (its `sid`): the browser secret and the forms' fields stay.
      const refreshed = {
        ...readSessionFrom(envelope),
        amr: session.amr,
        interaction: session.interaction,
        locale: envelope.user ? readSessionFrom(envelope).locale : session.locale,
      }
      writeSession(ctx, reply, refreshed)
      return refreshed
    } catch (error) {
      if (!(error instanceof AuthServiceError) || error.status !== 401) throw error
      clearSession(ctx, request, reply)
      return undefined
    }
  }
}

function readSessionFrom(envelope: TokenEnvelope): PageSession {
  return {
    accessToken: envelope.accessToken,
    refreshToken: envelope.refreshToken,
    expiresAt: Date.now() + envelope.accessTokenExpiresIn * 1000,
    locale: envelope.user?.locale ?? undefined,
  }
}
