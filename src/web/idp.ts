// Signing in through the tenant's identity provider from the hosted pages. The provider
// sends the browser back to the API's callback (CONTRACT §7 fixes that redirect URI), which
// answers a token envelope as JSON. For a sign-in the pages started, a cookie scoped to
// that callback's path carries the flow's state, sealed; the hook below turns the
// callback's answer into the page session and a 303 to the account page (or back to the
// sign-in page with the reason). Any other caller of the callback gets its JSON unchanged.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { clearCookie, readCookies, setCookie, setPageHeaders } from './http.ts'
import { writeSession } from './session.ts'

export const IDP_COOKIE = 'ta_idp'
const CALLBACK_ROUTE = '/v1/:tenantSlug/oauth/idp/callback'

type HandoffDeps = Pick<Deps, 'config' | 'cipher'>

const callbackPath = (slug: string) => `/v1/${slug}/oauth/idp/callback`
const secure = (deps: HandoffDeps) => deps.config.publicUrl.startsWith('https:')

/** Remembers, for ten minutes and this callback only, that the pages started `state`. */
export function rememberIdpState(
  deps: HandoffDeps,
  reply: FastifyReply,
  tenant: { id: string; slug: string },
  state: string,
): void {
  const sealed = deps.cipher.encrypt(JSON.stringify({ state }), `idp-handoff:${tenant.id}`)
  setCookie(reply, IDP_COOKIE, sealed, {
    path: callbackPath(tenant.slug),
    secure: secure(deps),
    maxAge: 600,
  })
}

function startedByPages(deps: HandoffDeps, request: FastifyRequest): boolean {
  const sealed = readCookies(request)[IDP_COOKIE]
  const state = (request.query as { state?: unknown } | undefined)?.state
  if (!sealed || typeof state !== 'string') return false
  try {
    const opened = JSON.parse(deps.cipher.decrypt(sealed, `idp-handoff:${request.tenant.id}`))
    return opened?.state === state
  } catch {
    return false
  }
}

export function installIdpHandoff(app: FastifyInstance, deps: HandoffDeps): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.url !== CALLBACK_ROUTE || !request.tenant) return done(null, payload)
    if (!startedByPages(deps, request)) return done(null, payload)
    const { tenant } = request
    const ctx = { config: deps.config, cipher: deps.cipher, tenantId: tenant.id, slug: tenant.slug }
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(String(payload))
    } catch {
      // Not JSON: treated as a failure below.
    }
    clearCookie(reply, IDP_COOKIE, { path: callbackPath(tenant.slug), secure: secure(deps) })
    setPageHeaders(reply)
    let location = `/t/${tenant.slug}/account`
    if (reply.statusCode === 200 && typeof body.accessToken === 'string') {
      writeSession(ctx, reply, {
        accessToken: body.accessToken,
        refreshToken: String(body.refreshToken),
        expiresAt: Date.now() + Number(body.accessTokenExpiresIn) * 1000,
      })
    } else {
      const reason = (body.details as { reason?: unknown } | undefined)?.reason
      location = `/t/${tenant.slug}/sign-in?idp=${encodeURIComponent(String(reason ?? 'idp_error'))}`
    }
    reply.code(303).header('location', location).type('text/plain; charset=utf-8')
    done(null, '')
  })
}
