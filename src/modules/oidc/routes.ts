// The OpenID provider in Fastify (CONTRACT §11): every request under /oidc/{slug}/ (and
// the RFC 8414 metadata at /.well-known/oauth-authorization-server/oidc/{slug}) is handed,
// raw, to the tenant's oidc-provider instance (pool.ts), which writes the response itself.
// Before that, the service's own onRequest hooks have run: an unknown or deleted tenant is
// 404 tenant_not_found, a NUL or lone surrogate in the query 400 (CONTRACT §8); the token
// endpoint's limits are taken (tokenLimits below); a tenant's `dynamicClientRegistration`
// admits the request to registration (registration.ts), each registration taking a point of
// RATE_LIMIT_CLIENT_REGISTRATION per IP.
//
// Bodies: this plugin is encapsulated with its own content-type parser, which reads any
// body as bytes (at most oidc-provider's own 56 KiB) and hands them over as `req.body`
// (oidc-provider reads a body already read from there), so the API's JSON-only rule
// stays untouched outside this plugin.
import type { IncomingMessage } from 'node:http'
import { parse } from 'node:querystring'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../lib/errors.ts'
import type { LimitName } from '../../lib/ratelimit.ts'
import { backchannelOnSessionsEnded, logBackchannelErrors } from './backchannel.ts'
import { DEVICE_CODES_REFUSED, type DeviceCodesRefusal, SETTLE_DEVICE_CODE } from './device.ts'
import { devicePollPace } from './device-polls.ts'
import { endHostedSessionOnLogout } from './logout.ts'
import { asPublicRequest, poolOf, SETTLE_TOKEN_LIMITS, type TokenOutcome } from './pool.ts'
import { admitRegistration, REGISTRATION_PATH } from './registration.ts'

const BODY_LIMIT = 56 * 1024
const DISCOVERY = '/.well-known/openid-configuration'

type RawRequest = IncomingMessage & {
  baseUrl?: string
  body?: Buffer
  [DEVICE_CODES_REFUSED]?: DeviceCodesRefusal
  [SETTLE_DEVICE_CODE]?: () => Promise<void>
  [SETTLE_TOKEN_LIMITS]?: (outcome: TokenOutcome) => Promise<void>
}

/** The client a token request names: HTTP Basic (RFC 6749 §2.3.1), else `client_id`. */
function clientIdOf(raw: RawRequest): string {
  const auth = raw.headers.authorization
  if (auth?.startsWith('Basic ')) {
    const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    try {
      return decodeURIComponent(colon === -1 ? decoded : decoded.slice(0, colon))
    } catch {
      return ''
    }
  }
  const id = raw.body ? parse(raw.body.toString('utf8')).client_id : undefined
  return typeof id === 'string' ? id : ''
}

/**
 * The token endpoint's limits (CONTRACT §11, Limits). The client a request names is not
 * known to be that client until oidc-provider has authenticated it, nor its grant to be
 * one until the provider has checked it, so the request takes a point of each budget that
 * may be its own first (consumed before the work, as every limit here; an address past
 * either of its budgets is refused before it touches the client's) and gives back all but
 * one once the provider has answered (pool.ts, settleTokenLimits):
 *   - the client authentication failed (invalid_client): a point of RATE_LIMIT_TOKEN_ENDPOINTS
 *     per client address, so whoever sends a client's id without its credentials spends
 *     their own budget, never the client's;
 *   - the client was authenticated but its grant refused (a junk refresh token or code,
 *     any other error than the device flow's pending answers): a point of
 *     RATE_LIMIT_OIDC_INVALID_GRANTS per client address. A public client (PKCE, no secret)
 *     is authenticated by its id alone, as oidc-provider has it, so without this anyone
 *     who read its id in a browser would spend its budget (issue 36 F4);
 *   - tokens issued (or the device flow's authorization_pending, slow_down): a point of
 *     RATE_LIMIT_OIDC_TOKEN per (tenant, client).
 */
async function tokenLimits(deps: Deps, tenantId: string, raw: RawRequest, ip: string) {
  const held: [LimitName, string][] = [
    ['oidcInvalidGrants', `oidc-invalid-grant:${ip}`],
    ['tokenEndpoints', `oidc-client-auth:${ip}`],
    ['oidcToken', `${tenantId}:${clientIdOf(raw)}`],
  ]
  const taken: [LimitName, string][] = []
  try {
    for (const [name, key] of held) {
      await deps.limits.hit(name, key)
      taken.push([name, key])
    }
  } catch (error) {
    await Promise.all(taken.map(([name, key]) => deps.limits.refund(name, key)))
    throw error
  }
  raw[SETTLE_TOKEN_LIMITS] = (outcome) => {
    const kept: LimitName = OUTCOME_BUDGET[outcome]
    return Promise.all(
      held.filter(([name]) => name !== kept).map(([name, key]) => deps.limits.refund(name, key)),
    ).then(() => undefined)
  }
}

/** Which budget a token request's outcome keeps its point of (tokenLimits). */
const OUTCOME_BUDGET: Record<TokenOutcome, LimitName> = {
  issued: 'oidcToken',
  clientRefused: 'tokenEndpoints',
  grantRefused: 'oidcInvalidGrants',
}

/**
 * RFC 8628 §5.1 (device.ts): a code entered at the device page takes a point per client
 * address, then one of its tenant's; past either budget the request becomes the form's GET,
 * marked refused (an address past its own budget never reaches the tenant's, and a request
 * the tenant's budget refuses gives the address its point back: it looked nothing up).
 */
async function deviceCodeLimits(
  deps: Deps,
  raw: RawRequest,
  tenantId: string,
  ip: string,
): Promise<string> {
  const held: [LimitName, string, DeviceCodesRefusal['by']][] = [
    ['deviceUserCodes', `device-user-code:${ip}`, 'address'],
    ['deviceUserCodesPerTenant', `device-user-code-tenant:${tenantId}`, 'tenant'],
  ]
  const taken: [LimitName, string][] = []
  for (const [name, key, by] of held) {
    try {
      await deps.limits.hit(name, key)
      taken.push([name, key])
    } catch (error) {
      if (!(error instanceof AppError) || error.reason !== 'rate_limited') throw error
      await Promise.all(taken.map(([name, key]) => deps.limits.refund(name, key)))
      raw[DEVICE_CODES_REFUSED] = { retryAfter: error.retryAfter ?? 60, by }
      raw.method = 'GET'
      raw.body = undefined
      delete raw.headers['content-type']
      delete raw.headers['content-length']
      return '/device'
    }
  }
  raw[SETTLE_DEVICE_CODE] = () =>
    Promise.all(taken.map(([name, key]) => deps.limits.refund(name, key))).then(() => undefined)
  return '/device'
}

interface DeviceSettleContext {
  req: RawRequest
  oidc?: { entities?: { DeviceCode?: unknown } }
}

/** Gives a code's point back once it found its pending device authorization. */
async function settleDeviceCode(ctx: DeviceSettleContext, next: () => Promise<void>) {
  try {
    await next()
  } finally {
    const settle = ctx.req[SETTLE_DEVICE_CODE]
    if (settle && ctx.oidc?.entities?.DeviceCode) await settle()
  }
}

export async function oidcRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  // Production without OIDC_SIGNING_KEYS: the provider is off, its paths 404. The pool is
  // shared with the hosted pages, which lead the interactions (web/pages/authorize.ts).
  const pool = poolOf(deps)
  if (!pool) return

  // CONTRACT §11, Logout: RP-initiated logout ends the hosted session, and every end of a
  // service session reaches the applications through back-channel logout.
  pool.onBuild((provider, tenant) => {
    const koa = provider as unknown as {
      use(middleware: unknown): void
      on(event: string, listener: (...args: unknown[]) => void): void
    }
    koa.use(endHostedSessionOnLogout(deps, tenant, fastify.log))
    koa.use(settleDeviceCode)
    koa.use(devicePollPace(deps, tenant.id))
    logBackchannelErrors(koa, fastify.log, tenant.id)
  })
  deps.sessions.onSessionsEnded(backchannelOnSessionsEnded({ db: deps.db, pool, log: fastify.log }))

  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT },
    (request, body, done) => {
      ;(request.raw as RawRequest).body = body as Buffer
      done(null, undefined)
    },
  )

  const hand = async (request: FastifyRequest, reply: FastifyReply, asked: string) => {
    let path = asked
    const tenant = request.tenant
    const raw = request.raw as RawRequest
    const route = path.split('?')[0]
    if (request.method === 'POST' && route === '/token') {
      await tokenLimits(deps, tenant.id, raw, request.clientIp)
    }
    if (request.method === 'POST' && route === '/device') {
      path = await deviceCodeLimits(deps, raw, tenant.id, request.clientIp)
    }
    // CONTRACT §11, Dynamic registration: the tenant's setting, read per request, opens it.
    if (tenant.dynamicClientRegistration) {
      if (request.method === 'POST' && route === REGISTRATION_PATH) {
        await deps.limits.hit('clientRegistration', request.clientIp)
      }
      admitRegistration(raw, request.actor)
    }
    // oidc-provider builds its URLs from the mount path it finds in `baseUrl`.
    raw.baseUrl = `/oidc/${tenant.slug}`
    raw.url = path
    asPublicRequest(raw, deps.config.publicUrl, request.clientIp)
    reply.hijack()
    pool.handler(tenant)(raw, reply.raw)
  }

  fastify.route({
    method: ['GET', 'POST', 'OPTIONS'],
    url: '/oidc/:tenantSlug/*',
    schema: { hide: true },
    handler: (request, reply) => {
      const prefix = `/oidc/${request.tenant.slug}`
      return hand(request, reply, request.raw.url?.slice(prefix.length) || '/')
    },
  })

  // RFC 8414 §3: the metadata of issuer {PUBLIC_URL}/oidc/{slug}, at the well-known URI
  // with the issuer's path appended.
  fastify.get(
    '/.well-known/oauth-authorization-server/oidc/:tenantSlug',
    { schema: { hide: true } },
    (request, reply) => {
      const query = request.raw.url?.indexOf('?') ?? -1
      return hand(request, reply, DISCOVERY + (query === -1 ? '' : request.raw.url?.slice(query)))
    },
  )
}
