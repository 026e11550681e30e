// The hosted pages' CSRF check (CONTRACT §16; the field is made and read in session.ts) as
// one preHandler: every state-changing request of the routes registered through
// `csrfChecked` must carry the form's `_csrf` field, checked once the body is parsed and
// before the handler runs, so no handler repeats the check and a new form route cannot
// forget it (test/web/csrf-routes.test.ts posts to every page route without the field).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Pages } from './context.ts'
import { html } from './html.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A route the pages' script calls with JSON (the passkey ceremonies): refused with a
     * JSON `{ error }` the script shows, instead of the expired-form page.
     */
    pageScript?: boolean
  }
}

/** The options of a route pages.js calls. */
export const PAGE_SCRIPT = { config: { pageScript: true } } as const

/** The message shown when a form's CSRF field is missing or stale. */
export async function expiredForm(pages: Pages, request: FastifyRequest, reply: FastifyReply) {
  const t = pages.t(request, reply)
  return pages.send(
    request,
    reply,
    t('csrf.title'),
    html`<h1>${t('csrf.heading')}</h1>
<p>${t('csrf.text')}</p>
<p><a href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`,
    { status: 403 },
  )
}

/** Methods that change nothing (RFC 9110 §9.2.1): pages answer them without a field. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Registers `routes` in a scope of their own whose every state-changing request is refused
 * (403) without this browser's CSRF field: the expired-form page, or JSON for a route that
 * declares `PAGE_SCRIPT`. The scope inherits the pages' form parser, error handler and hooks.
 */
export function csrfChecked(
  app: FastifyInstance,
  pages: Pages,
  routes: (app: FastifyInstance) => void,
): void {
  app.register(async (scope) => {
    scope.addHook('preHandler', async (request, reply) => {
      if (SAFE.has(request.method) || pages.csrfValid(request)) return
      if (request.routeOptions.config.pageScript) {
        const t = pages.t(request, reply)
        return reply.code(403).send({ error: t('csrf.scriptExpired') })
      }
      return expiredForm(pages, request, reply)
    })
    routes(scope)
  })
}
