// The OIDC connections' redirect URI (CONTRACT §12): `/v1/{slug}/sso/{id}/oidc/callback`.
// A browser endpoint: it answers a 303 (signed in) or an error page, never JSON, so it is
// left out of the OpenAPI document like the other pages.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { isUuid } from '../../lib/ids.ts'
import { CallbackRefused, finishOidcSignIn } from './oidc-signin.ts'
import { findConnection } from './queries.ts'
import { finishSsoSignIn, readFlow, refuseSsoSignIn } from './sso-signin.ts'

export async function ssoOidcRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.get(
    '/sso/:id/oidc/callback',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const { tenant } = request
      const { id } = request.params as { id: string }
      const query = stringsOf(request.query)
      const connection = isUuid(id) ? await findConnection(deps.db, tenant.id, id) : undefined
      if (connection?.type !== 'oidc') {
        return refuseSsoSignIn(deps, request, reply, { tenantId: tenant.id, id }, 'not_found', {
          status: 404,
          audited: true,
        })
      }
      // The state must be the one this browser left with (login CSRF): else the state is
      // refused without being spent, so the browser that owns it can still finish.
      if (
        !query.state ||
        readFlow(deps, request, tenant, { kind: 'sso', id }).binding !== query.state
      ) {
        return refuseSsoSignIn(deps, request, reply, connection, 'invalid_state', { status: 400 })
      }
      let identity: Awaited<ReturnType<typeof finishOidcSignIn>>
      try {
        identity = await finishOidcSignIn(deps, tenant, connection, query)
      } catch (error) {
        if (!(error instanceof CallbackRefused)) throw error
        request.log.warn({ err: error.message, connectionId: id }, 'SSO OIDC sign-in refused')
        return refuseSsoSignIn(deps, request, reply, connection, error.reason, {
          status: error.status,
        })
      }
      return finishSsoSignIn(deps, request, reply, connection, identity)
    },
  )
}

/** The query's string values (a repeated parameter: its first value). */
export function stringsOf(query: unknown): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    const first = Array.isArray(value) ? value[0] : value
    if (typeof first === 'string') out[key] = first
  }
  return out
}
