// Authentication and authorization, declared per route with `config.auth`:
//   'user'      a user access token of this tenant (API keys: 401)
//   'signedIn'  a user access token or an API key of this tenant (GET permissions)
//   'admin'     a user token or an API key holding `config.permission` (CONTRACT §4, §17)
//   'adminUser' as 'admin', user tokens only (API keys: 403 api_key_not_allowed)
//   'apiKey'    an API key of this tenant only (user tokens: 401 invalid_api_key)
//   'optionalUser' as 'user' when an Authorization header is sent, else anonymous (a route
//               that serves the signed-in user and a stranger alike, CONTRACT §9
//               verify-email); a token that is sent must be valid, it never falls back
// The checks run in onRequest, after tenant resolution and before the body is read.
//
// Admin routes (CONTRACT §17) name the tenant permission they need in `config.permission`;
// a route with an admin mode and none, or one the catalogue does not know, fails the start.
// The caller's effective permissions are resolved once per admin request, in `admin`
// (user) or `keyHolder` (API key), and checked by `authorize`: none at all is 403
// admin_required (the SPEC's Member), some but not the route's 403 permission_required.
// A user's come from its row, read live on every admin request as before (one read, no
// more), so a demotion holds at once on every instance.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { AppError } from '../lib/errors.ts'
import { servedClientOf } from '../lib/served-client.ts'
import { authenticateApiKey, isApiKey } from '../modules/apikeys/authenticate.ts'
import type { Actor } from '../modules/audit/recorder.ts'
import {
  ALL_PERMISSIONS,
  effectivePermissions,
  grants,
  holdsAll,
  isAdminRole,
  isPermission,
  type Permission,
} from '../modules/roles/permissions.ts'
import { findUserAccess } from '../modules/users/reads.ts'

export type AuthMode = 'user' | 'signedIn' | 'admin' | 'adminUser' | 'apiKey' | 'optionalUser'

/** The modes whose routes must name a tenant permission. */
const ADMIN_MODES: ReadonlySet<AuthMode> = new Set(['admin', 'adminUser'])

export type Principal =
  | {
      kind: 'user'
      userId: string
      sessionId: string
      role: string
      /** The administrator signed in as this user (CONTRACT §22), from the token's `act`. */
      impersonatedBy?: string
    }
  | { kind: 'apiKey'; keyId: string }

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode
    /** The tenant permission an admin route needs (CONTRACT §17). */
    permission?: Permission
    /**
     * CONTRACT §22: an impersonated session may not use this route (the password, the
     * factors, deleting the account, step-up, impersonating): 403 impersonation_forbidden.
     */
    refusedToImpersonation?: boolean
  }
  interface FastifyRequest {
    principal: Principal | null
    actor: Actor
    /**
     * The caller's effective tenant permissions, sorted: resolved on admin routes (and
     * GET me, from the row it reads); empty elsewhere.
     */
    permissions: readonly Permission[]
    /**
     * Whether the caller may change who is an Admin (CONTRACT §17, the base role rule): a
     * user whose base role is Admin, read with its permissions on admin routes, or an API
     * key holding every permission (as every key did before keys had permissions).
     */
    baseRoleAuthority: boolean
  }
}

/**
 * Refuses, at registration, an admin route that names no permission or one outside the
 * catalogue: an unguarded admin route cannot start.
 */
export function checkRoutePermission(route: {
  method: string | string[]
  url: string
  config?: { auth?: AuthMode; permission?: string }
}): void {
  const { auth, permission } = route.config ?? {}
  if (!auth || !ADMIN_MODES.has(auth)) return
  if (permission === undefined || !isPermission(permission)) {
    const method = [route.method].flat().join(',')
    throw new Error(
      `${method} ${route.url}: an admin route must name a tenant permission in config.permission (CONTRACT §17), not ${JSON.stringify(permission)}`,
    )
  }
}

/** 403 admin_required for a caller holding nothing, permission_required for one short. */
export function authorize(held: readonly Permission[], needed: Permission): void {
  if (grants(held, needed)) return
  if (held.length === 0) throw new AppError('admin_required')
  throw new AppError('permission_required', { details: { permission: needed } })
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
  app.decorateRequest('permissions', null as unknown as readonly Permission[])
  app.decorateRequest('baseRoleAuthority', false)
  app.addHook('onRoute', checkRoutePermission)
  // A user token is checked without waiting (a cached signature check and a memory
  // lookup), so the hook is synchronous on that path; API keys and admin rights need the
  // database.
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    request.permissions = NO_PERMISSIONS
    request.baseRoleAuthority = false
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
    const impersonatedBy = claims.act?.sub
    if (impersonatedBy && request.routeOptions.config?.refusedToImpersonation) {
      throw new AppError('impersonation_forbidden')
    }
    request.principal = {
      kind: 'user',
      userId: claims.sub,
      sessionId: claims.sid,
      role: claims.role,
      ...(impersonatedBy ? { impersonatedBy } : {}),
    }
    request.actor = { ...request.actor, type: 'user', id: claims.sub }
    if (mode === 'user' || mode === 'optionalUser' || mode === 'signedIn') return done()
    admin(request, claims.sub).then(() => done(), done)
  })

  async function keyHolder(request: FastifyRequest, mode: AuthMode, token: string) {
    // A valid key is still refused where only an Admin's user token may go (403) or where
    // it lacks the route's permission, and neither refusal is a use of the key.
    const tenantId = request.tenant.id
    const key = await authenticateApiKey(deps, request.tenant, token, {
      // Recorded below, once the key's permissions let it in.
      use: false,
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
    // A key's own permissions, kept with the key (no read of their own). A key is never a
    // Member: one short of the route's is refused with permission_required, even if empty.
    request.permissions = key.permissions
    request.baseRoleAuthority = holdsAll(key.permissions, ALL_PERMISSIONS)
    const needed = request.routeOptions.config.permission
    if (needed && !grants(key.permissions, needed)) {
      throw new AppError('permission_required', { details: { permission: needed } })
    }
    deps.apiKeyUsage.touch(tenantId, key.id, deps.clock.now())
  }

  async function admin(request: FastifyRequest, userId: string) {
    // Permissions are read from the database, not the token, so a demotion or suspension
    // takes effect at once rather than when the token expires.
    const user = await findUserAccess(deps.db, request.tenant.id, userId)
    if (user?.status !== 'Active') throw new AppError('session_revoked')
    request.permissions = effectivePermissions(user.role, user.rolePermissions)
    request.baseRoleAuthority = isAdminRole(user.role)
    authorize(request.permissions, request.routeOptions.config.permission as Permission)
    // The 429 the spec lists on administration routes: a budget per admin or key.
    await deps.limits.hit('adminRequests', `${request.tenant.id}:user:${user.id}`)
  }
}

const NO_PERMISSIONS: readonly Permission[] = Object.freeze([])

const API_KEY_ONLY = 'This route needs an API key of this workspace.'

function bearer(request: FastifyRequest): string {
  const header = request.headers.authorization
  if (!header) throw new AppError('token_missing')
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim())
  if (!match) throw new AppError('token_invalid')
  return match[1]
}
