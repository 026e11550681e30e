// The hosted pages (/t/{tenantSlug}/…) and their static assets (/assets/pages.*). The
// pages are a client of the JSON API like any other (web/api.ts); this plugin adds only
// what documents need: form bodies, the CSRF check, security headers, and errors as pages.
import { readFileSync } from 'node:fs'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { dir, type MessageKey, type MessageValues, translator } from '../i18n/index.ts'
import { AppError } from '../lib/errors.ts'
import { AuthServiceError } from './api.ts'
import { brandingRoutes } from './branding.ts'
import { captchaAssetRoutes } from './captcha.ts'
import { Pages } from './context.ts'
import { csrfChecked } from './csrf.ts'
import { escapeText, html } from './html.ts'
import { installFormParser, setPageHeaders } from './http.ts'
import { requestLocale } from './lang-cookie.ts'
import { page } from './layout.ts'
import { accountRoutes } from './pages/account.ts'
import { authorizeRoutes } from './pages/authorize.ts'
import { connectedAppRoutes } from './pages/connected-apps.ts'
import { passkeyRoutes } from './pages/passkeys.ts'
import { recoveryRoutes } from './pages/recovery.ts'
import { samlSsoRoutes } from './pages/saml-sso.ts'
import { signInRoutes } from './pages/signin.ts'
import { ssoSecondFactorRoutes } from './pages/sso-second-factor.ts'

const ASSETS = {
  'pages.css': 'text/css; charset=utf-8',
  'pages.js': 'text/javascript; charset=utf-8',
} as const

export async function assetRoutes(app: FastifyInstance): Promise<void> {
  for (const [name, type] of Object.entries(ASSETS)) {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url))
    app.get(`/assets/${name}`, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type(type)
        .header('cache-control', 'public, max-age=300')
        .header('x-content-type-options', 'nosniff')
        .send(body),
    )
  }
  // ALTCHA's widget, its worker and stylesheet, and the pages' glue (web/captcha.ts).
  await captchaAssetRoutes(app)
}

/**
 * A page for an error before a page could be drawn (an unknown workspace, a bad body), in
 * `locale` (negotiated from the request alone: lang-cookie.ts `requestLocale`).
 */
function errorDocument(locale: string, title: string, message: string): string {
  return `<!doctype html><html lang="${locale}" dir="${dir(locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeText(title)}</title><link rel="stylesheet" href="/assets/pages.css"></head><body><main class="card"><h1>${escapeText(title)}</h1><p>${escapeText(message)}</p></main></body></html>`
}

export async function pageRoutes(
  app: FastifyInstance,
  { deps, root }: { deps: Deps; root: FastifyInstance },
): Promise<void> {
  installFormParser(app)
  const pages = new Pages(root, deps)
  // Pages are documents, not API operations: kept out of the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true }
  })
  /** A plain error page in the request's language (`?lang=`, Accept-Language; lang-cookie.ts). */
  const plainError = (request: FastifyRequest, titleKey: MessageKey, messageKey: MessageKey) => {
    const locale = requestLocale(request, deps.config.publicUrl, request.tenant)
    const t = translator(locale)
    return errorDocument(locale, t(titleKey), t(messageKey))
  }
  /**
   * An error as a page: with the tenant's name and logo, in the request's language, when the
   * workspace is known (else a plain page, in the language the request asks for).
   */
  const errorPage = async (
    request: FastifyRequest,
    titleKey: MessageKey,
    messageKey: MessageKey,
    values?: MessageValues,
  ) => {
    const locale = request.tenant
      ? pages.locale(request)
      : requestLocale(request, deps.config.publicUrl)
    const t = translator(locale)
    const title = t(titleKey)
    const message = t(messageKey, values)
    if (!request.tenant) return errorDocument(locale, title, message)
    try {
      const body = html`<h1>${title}</h1><p>${message}</p>`
      return page(await pages.brand(request), title, body).value
    } catch {
      // The brand needs the database: without it the plain page still says what happened.
      return errorDocument(locale, title, message)
    }
  }
  app.setErrorHandler(
    async (
      error: Error & { statusCode?: number },
      request: FastifyRequest,
      reply: FastifyReply,
    ) => {
      setPageHeaders(reply, request.tenant ? pages.kind(request) : { authorization: false })
      reply.type('text/html; charset=utf-8')
      if (error instanceof AppError && error.reason === 'tenant_not_found') {
        return reply
          .code(404)
          .send(plainError(request, 'errors.noWorkspaceTitle', 'errors.noWorkspaceText'))
      }
      // A call to the API that a page did not expect to fail: the session it used has
      // ended (signed out elsewhere, revoked, the user deleted) or a limit was met.
      if (error instanceof AuthServiceError && error.status === 401 && request.tenant) {
        pages.endSession(request, reply)
        return reply.redirect(pages.url(request, 'sign-in'), 303)
      }
      if (error instanceof AuthServiceError && error.status === 429) {
        const wait = Math.ceil((error.retryAfter ?? 60) / 60)
        return reply
          .code(429)
          .send(await errorPage(request, 'errors.tooManyTitle', 'errors.tooManyText', { wait }))
      }
      // A method the page does not take (src/plugins/methods.ts set Allow): RFC 9110's 405.
      if (error instanceof AppError && error.reason === 'method_not_allowed') {
        return reply
          .code(405)
          .send(await errorPage(request, 'errors.methodTitle', 'errors.methodText'))
      }
      const status =
        error instanceof AppError
          ? error.status
          : error instanceof AuthServiceError
            ? error.status
            : (error.statusCode ?? 500)
      if (status >= 500) {
        request.log.error({ err: error }, 'page failed')
        return reply
          .code(500)
          .send(await errorPage(request, 'errors.serverTitle', 'errors.serverText'))
      }
      return reply
        .code(status)
        .send(await errorPage(request, 'errors.badRequestTitle', 'errors.badRequestText'))
    },
  )
  app.setNotFoundHandler((request, reply) => {
    setPageHeaders(reply, request.tenant ? pages.kind(request) : { authorization: false })
    return reply
      .code(404)
      .type('text/html; charset=utf-8')
      .send(plainError(request, 'errors.notFoundTitle', 'errors.notFoundText'))
  })
  signInRoutes(app, pages)
  brandingRoutes(app)
  csrfChecked(app, pages, (app) => ssoSecondFactorRoutes(app, pages, deps))
  accountRoutes(app, pages)
  connectedAppRoutes(app, pages)
  passkeyRoutes(app, pages)
  recoveryRoutes(app, pages)
  authorizeRoutes(app, pages)
  samlSsoRoutes(app, pages)
}
