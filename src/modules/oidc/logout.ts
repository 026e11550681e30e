// RP-initiated logout ends the hosted session too (CONTRACT §11, Logout): once oidc-provider
// confirmed a full sign-out (end_session_confirm with `logout`; its pages are
// web/pages/oidc-logout.ts), the service session its provider session was signed in from is
// revoked as the hosted pages' sign-out revokes it (UserLogout, SessionRevoked; its access
// tokens refused at once, on every instance within seconds) and the page cookie removed.
import type { FastifyBaseLogger } from 'fastify'
import type { Deps } from '../../deps.ts'
import { clearedSessionCookie } from '../../lib/cookies.ts'
import { AppError } from '../../lib/errors.ts'
import { findTenantById } from '../tenants/tenant.ts'
import { SERVICE_SESSION } from './browser-sign-in.ts'

interface LogoutContext {
  status: number
  response: { get(name: string): string }
  ip: string
  get(name: string): string
  append(name: string, value: string): void
  oidc?: {
    route?: string
    session?: { accountId?: string; [SERVICE_SESSION]?: string }
    params?: { logout?: string }
  }
}

type HostedLogoutDeps = Pick<Deps, 'db' | 'config' | 'sessions'>

/**
 * The provider's middleware (Koa, after the route). A failure is logged and the browser
 * still goes on to the application: the provider session is already gone.
 */
export function endHostedSessionOnLogout(
  deps: HostedLogoutDeps,
  tenant: { id: string; slug: string },
  log: FastifyBaseLogger,
) {
  return async (ctx: LogoutContext, next: () => Promise<void>) => {
    await next()
    const { oidc } = ctx
    if (oidc?.route !== 'end_session_confirm' || ctx.status !== 303 || !oidc.params?.logout) {
      return
    }
    // oidc-provider ends its session the same way when another user's sign-in resumes an
    // authorization (an account switch), then goes back to that authorization: the hosted
    // session in the browser is then the new user's, and stays.
    if (isAccountSwitch(ctx.response.get('location'), tenant.slug)) return
    const userId = oidc.session?.accountId
    const sessionId = oidc.session?.[SERVICE_SESSION]
    if (!userId || !sessionId) return
    ctx.append('Set-Cookie', clearedSessionCookie({ config: deps.config, slug: tenant.slug }))
    try {
      const found = await findTenantById(deps.db, tenant.id)
      if (!found) return
      const actor = {
        type: 'user' as const,
        id: userId,
        ip: ctx.ip || null,
        userAgent: ctx.get('user-agent') || null,
      }
      await deps.sessions.revokeOne(found.tenant, userId, sessionId, actor, 'logout', [
        { action: 'UserLogout', userId, metadata: { sessionId, via: 'oidc' } },
      ])
    } catch (err) {
      // Already ended (signed out on the pages, revoked, expired): nothing left to do.
      if (err instanceof AppError && err.reason === 'not_found') return
      log.warn({ err, tenantId: tenant.id }, 'the hosted session did not end at OpenID logout')
    }
  }
}

/** Whether a confirmed logout goes on to the provider's own authorization (its resume). */
function isAccountSwitch(location: string, slug: string): boolean {
  try {
    return new URL(location, 'http://x').pathname.startsWith(`/oidc/${slug}/auth/`)
  } catch {
    return false
  }
}
