// Signing in through the tenant's identity provider from the hosted pages. The provider
// sends the browser back to the API's callback (CONTRACT §7 fixes that redirect URI), which
// answers a token envelope as JSON. For a sign-in the pages started, a cookie (over https
// `__Host-ta_idp_{slug}` at `/`, CONTRACT §16; over http scoped to the callback) carries the flow's state, sealed; the hook below turns the
// callback's answer into the page session and a 303 to the account page (or back to the
// sign-in page with the reason). A caller without that cookie gets its JSON unchanged.
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onSendHookHandler,
  preHandlerHookHandler,
} from 'fastify'
import type { Deps } from '../deps.ts'
import { hostCookie } from '../lib/host-cookie.ts'
import { markPagesDriven, pendingSecondFactorOf } from '../modules/federation/idp/service.ts'
import { PENDING_TTL, pendingCookie } from '../modules/federation/pending-mfa.ts'
import { clearCookie, readCookies, setCookie, setPageHeaders } from './http.ts'
import { completeSignIn, servesAuthorization } from './session.ts'

export const IDP_COOKIE = 'ta_idp'
const CALLBACK_ROUTE = '/v1/:tenantSlug/oauth/idp/callback'

type HandoffDeps = Pick<Deps, 'config' | 'cipher'>

const callbackPath = (slug: string) => `/v1/${slug}/oauth/idp/callback`
/** Over https `__Host-ta_idp_{slug}` at `/` (CONTRACT §16), else scoped to the callback. */
const idpCookie = (deps: HandoffDeps, slug: string) =>
  hostCookie(deps.config.publicUrl, IDP_COOKIE, [slug], callbackPath(slug))

/** The states the pages started, from the cookie (empty when there is none or it is bad). */
function statesOf(
  deps: HandoffDeps,
  request: FastifyRequest,
  tenant: { id: string; slug: string },
): string[] {
  const tenantId = tenant.id
  const sealed = readCookies(request)[idpCookie(deps, tenant.slug).name]
  if (!sealed) return []
  try {
    const opened = JSON.parse(deps.cipher.decrypt(sealed, `idp-handoff:${tenantId}`))
    const states: unknown = opened?.states
    return Array.isArray(states) ? states.filter((x): x is string => typeof x === 'string') : []
  } catch {
    return []
  }
}

/**
 * Remembers, for ten minutes and this callback only, that the pages started `state`; the
 * last few are kept, so sign-ins begun in several tabs each come back to a page.
 */
export function rememberIdpState(
  deps: HandoffDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: { id: string; slug: string },
  state: string,
): void {
  const states = [...statesOf(deps, request, tenant), state].slice(-5)
  const sealed = deps.cipher.encrypt(JSON.stringify({ states }), `idp-handoff:${tenant.id}`)
  const { name, ...where } = idpCookie(deps, tenant.slug)
  setCookie(reply, name, sealed, { ...where, maxAge: 600 })
}

const wordsAad = (tenantId: string) => `idp-words:${tenantId}`

function sealIdpWords(deps: HandoffDeps, tenantId: string, words: string): string {
  return deps.cipher.encrypt(
    JSON.stringify({ words, until: Date.now() + 600_000 }),
    wordsAad(tenantId),
  )
}

/** The words a sealed `words` of the sign-in page's address carries (none when bad or old). */
export function openIdpWords(
  deps: HandoffDeps,
  tenantId: string,
  sealed: unknown,
): string | undefined {
  if (typeof sealed !== 'string' || sealed.length > 2000) return undefined
  try {
    const value = JSON.parse(deps.cipher.decrypt(sealed, wordsAad(tenantId)))
    if (typeof value?.words !== 'string' || !(value.until > Date.now())) return undefined
    return value.words
  } catch {
    return undefined
  }
}

export function installIdpHandoff(app: FastifyInstance, deps: HandoffDeps): void {
  // A hook of the callback route alone: a global onSend hook would put every reply of the
  // service through Fastify's hook runner (issue 10).
  app.addHook('onRoute', (route) => {
    if (route.url !== CALLBACK_ROUTE) return
    const own = route.onSend
    route.onSend = own === undefined ? [handoff] : [...(Array.isArray(own) ? own : [own]), handoff]
    const before = route.preHandler
    route.preHandler =
      before === undefined ? [driven] : [...(Array.isArray(before) ? before : [before]), driven]
  })

  // A callback of a sign-in the pages started may defer a second factor to the pages.
  const driven: preHandlerHookHandler = (request, _reply, done) => {
    const state = (request.query as { state?: unknown } | undefined)?.state
    if (
      request.tenant &&
      typeof state === 'string' &&
      statesOf(deps, request, request.tenant).includes(state)
    ) {
      markPagesDriven(request)
    }
    done()
  }

  const handoff: onSendHookHandler = (request, reply, payload, done) => {
    if (!request.tenant) return done(null, payload)
    // A browser the pages sent to the provider comes back to a page, never to JSON: a state
    // the cookie does not list is answered as the sign-in page's invalid_state.
    const { tenant } = request
    const { name, ...where } = idpCookie(deps, tenant.slug)
    if (!readCookies(request)[name]) return done(null, payload)
    const state = (request.query as { state?: unknown } | undefined)?.state
    const ours = typeof state === 'string' && statesOf(deps, request, tenant).includes(state)
    const ctx = { config: deps.config, cipher: deps.cipher, tenantId: tenant.id, slug: tenant.slug }
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(String(payload))
    } catch {
      // Not JSON: treated as a failure below.
    }
    clearCookie(reply, name, where)
    // A step of the authorization this browser signs in for, if any (its popup's opener).
    setPageHeaders(reply, { authorization: servesAuthorization(ctx, request) })
    let location: string
    const pending = pendingSecondFactorOf(request)
    if (ours && pending) {
      // The provider reported no second factor the tenant asks: the pages ask for it.
      const cookie = pendingCookie(deps.config.publicUrl, tenant.slug)
      const { name: pendingName, ...at } = cookie
      setCookie(reply, pendingName, pending, { ...at, maxAge: PENDING_TTL })
      location = `/t/${tenant.slug}/sign-in/sso/second-factor`
    } else if (!ours) {
      location = `/t/${tenant.slug}/sign-in?idp=invalid_state`
    } else if (reply.statusCode === 200 && typeof body.accessToken === 'string') {
      const interaction = completeSignIn(ctx, request, reply, {
        accessToken: body.accessToken,
        refreshToken: String(body.refreshToken),
        expiresAt: Date.now() + Number(body.accessTokenExpiresIn) * 1000,
        amr: ['fed'],
      })
      location = interaction ?? `/t/${tenant.slug}/account`
    } else {
      const reason = (body.details as { reason?: unknown } | undefined)?.reason
      location = `/t/${tenant.slug}/sign-in?idp=${encodeURIComponent(String(reason ?? 'idp_error'))}`
      // CONTRACT §21: a hook's deny shows the hook's message, sealed so that no link can
      // put words of its own on the page.
      if (reason === 'hook_denied' && typeof body.message === 'string') {
        location += `&words=${encodeURIComponent(sealIdpWords(deps, tenant.id, body.message))}`
      }
    }
    reply.code(303).header('location', location).type('text/plain; charset=utf-8')
    done(null, '')
  }
}
