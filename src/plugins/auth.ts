// Authentication and authorization, declared per route with `config.auth`:
//   'user'      a user access token of this tenant (API keys: 401)
//   'admin'     an Admin's access token, or an API key of this tenant (CONTRACT §4)
//   'adminUser' an Admin's access token only (API keys: 403 api_key_not_allowed)
//   'apiKey'    an API key of this tenant only (user tokens: 401 invalid_api_key)
//   'optionalUser' as 'user' when an Authorization header is sent, else anonymous (a route
//               that serves the signed-in user and a stranger alike, CONTRACT §9
//               verify-email); a token that is sent must be valid, it never falls back
// The checks run in onRequest, after tenant resolution and before the body is read.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { AppError } from '../lib/errors.ts'
import { servedClientOf } from '../lib/served-client.ts'
import { authenticateApiKey, isApiKey } from '../modules/apikeys/authenticate.ts'
import type { Actor } from '../modules/audit/recorder.ts'
import { findUserById } from '../modules/users/queries.ts'

export type AuthMode = 'user' | 'admin' | 'adminUser' | 'apiKey' | 'optionalUser'

export type Principal =
  | { kind: 'user'; userId: string; sessionId: string; role: string }
  | { kind: 'apiKey'; keyId: string }

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode
  }
  interface FastifyRequest {
    principal: Principal | null
    actor: Actor
  }
}

export function installAuthentication(
  app: FastifyInstance,
  deps: Pick<
    Deps,
    'apiKeyUsage' | 'apiKeys' | 'clock' | 'db' | 'limits' | 'revocations' | 'tokens'
  >,
): void {
  app.decorateRequest('principal', null)
  app.decorateRequest('actor', null as unknown as Actor)
  // A user token is checked without waiting (a cached signature check and a memory
  // lookup), so the hook is synchronous on that path; API keys and admin rights need the
  // database.
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    request.actor = {
      type: 'anonymous',
      id: null,
      ip: request.clientIp || null,
      userAgent: request.headers['user-agent'] ?? null,
      servedClientId: servedClientOf(request.headers),
    }
    const mode = request.routeOptions.config?.auth
    if (!mode) return done()
    if (mode === 'optionalUser' && !request.headers.authorization) return done()
    const token = bearer(request)
    if (isApiKey(token)) {
      if (mode === 'user' || mode === 'optionalUser') throw new AppError('user_token_required')
      keyHolder(request, mode, token).then(() => done(), done)
      return
    }
    if (mode === 'apiKey') throw new AppError('invalid_api_key', { message: API_KEY_ONLY })
    const claims = deps.tokens.verify(token, deps.clock.now())
    if (claims.tid !== request.tenant.id) throw new AppError('token_invalid')
    if (deps.revocations.has(claims.sid)) throw new AppError('session_revoked')
    request.principal = {
      kind: 'user',
      userId: claims.sub,
      sessionId: claims.sid,
      role: claims.role,
    }
    request.actor = { ...request.actor, type: 'user', id: claims.sub }
    if (mode === 'user' || mode === 'optionalUser') return done()
    admin(request, claims.sub).then(() => done(), done)
  })

  async function keyHolder(request: FastifyRequest, mode: AuthMode, token: string) {
    // A valid key is still refused where only an Admin's user token may go (403), and
    // that refusal is not a use of the key.
    const tenantId = request.tenant.id
    const key = await authenticateApiKey(deps, request.tenant, token, {
      use: mode !== 'adminUser',
      // The 429 the spec lists on administration routes: a budget per admin or key, taken
      // for a valid key only (beside the key check's Redis read when the key is kept).
      alongside:
        mode === 'adminUser'
          ? undefined
          : (keyId) => deps.limits.hit('adminRequests', `${tenantId}:key:${keyId}`),
    })
    if (mode === 'adminUser') throw new AppError('api_key_not_allowed')
    request.principal = { kind: 'apiKey', keyId: key.id }
    request.actor = { ...request.actor, type: 'apiKey', id: key.id }
  }

  async function admin(request: FastifyRequest, userId: string) {
    // Admin rights are read from the database, not the token, so a demotion or suspension
    // takes effect at once rather than when the token expires.
    const user = await findUserById(deps.db, request.tenant.id, userId)
    if (user?.status !== 'Active') throw new AppError('session_revoked')
    if (user.role !== 'Admin') throw new AppError('admin_required')
    // The 429 the spec lists on administration routes: a budget per admin or key.
    await deps.limits.hit('adminRequests', `${request.tenant.id}:user:${user.id}`)
  }
}

const API_KEY_ONLY = 'This route needs an API key of this workspace.'

function bearer(request: FastifyRequest): string {
  const header = request.headers.authorization
  if (!header) throw new AppError('token_missing')
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim())
  if (!match) throw new AppError('token_invalid')
  return match[1]
}
