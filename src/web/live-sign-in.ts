// The page session of a tenant, verified by the service (its token, then its `sessions` row
// live, the same user, Active): what the steps of an application's sign-in (an OpenID
// interaction, authorize.ts; a SAML sign-in, saml-sso.ts) accept as "signed in".
import type { FastifyReply, FastifyRequest } from 'fastify'
import { liveSessionOf } from '../modules/introspection/service.ts'
import type { Pages } from './context.ts'

export interface SignIn {
  userId: string
  sessionId: string
  signedInAt: Date
  amr: string[]
  /** The interaction uid the sign-in was made for (session.ts). */
  interaction?: string
}

export async function liveSignInOf(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<SignIn | undefined> {
  const { deps } = pages
  const session = await pages.session(request, reply)
  if (!session) return undefined
  const now = deps.clock.now()
  let claims: { sub: string; tid: string; sid: string }
  try {
    claims = deps.tokens.verify(session.accessToken, now)
  } catch {
    return undefined
  }
  if (claims.tid !== request.tenant.id) return undefined
  // Only an Active user of the tenant signs in to an application (CONTRACT §11, §22).
  const found = await liveSessionOf(deps, request.tenant.id, claims.sid, claims.sub, now)
  if (found?.status !== 'Active') return undefined
  return {
    userId: claims.sub,
    signedInAt: found.signedInAt,
    sessionId: claims.sid,
    amr: session.amr ?? [],
    interaction: session.interaction,
  }
}
