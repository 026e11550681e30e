// Token introspection (RFC 7662) for the back ends of a tenant. A token is active only
// when every check the authentication plugin makes on a request passes (signature,
// algorithm, issuer, lifetime, this tenant, not in the revocation cache), and, stricter
// than a request, when its session is still live in the database: the revocation cache
// may lag another instance by a second, introspection is asked to be authoritative.
// The role answered is the user's role now, read with the session (CONTRACT §16): a token
// carries the role of its sign-in for up to 15 minutes, and a demoted Admin must not be
// vouched for as one by us while our own admin routes already refuse them.
import type { Deps } from '../../deps.ts'
import { AppError } from '../../lib/errors.ts'
import type { AccessClaims } from '../../lib/jwt.ts'
import { findLiveSession, type LiveSession, liveSessionRole } from './queries.ts'
import type { Introspection } from './schemas.ts'

const INACTIVE = { active: false } as const

export async function introspect(
  deps: Pick<Deps, 'db' | 'clock' | 'revocations' | 'tokens'>,
  tenantId: string,
  token: string,
): Promise<Introspection> {
  const now = deps.clock.now()
  let claims: AccessClaims
  try {
    claims = deps.tokens.verify(token, now)
  } catch (error) {
    // Whatever is wrong with the token (RFC 7662 §2.2), the answer is the same.
    if (error instanceof AppError) return INACTIVE
    throw error
  }
  // The signature checked expiry against the process's time; the service's clock decides.
  if (claims.exp <= Math.floor(now.getTime() / 1000)) return INACTIVE
  if (claims.tid !== tenantId) return INACTIVE
  if (deps.revocations.has(claims.sid)) return INACTIVE
  const live = await liveSessionRole(deps.db, tenantId, claims.sid, claims.sub, now)
  if (live === undefined) return INACTIVE
  const { sub, tid, sid, iat, exp, iss } = claims
  // `roles` (CONTRACT §17): the custom role names now, omitted when the user holds none.
  const roles = live.roles.length > 0 ? { roles: live.roles } : {}
  return { active: true, sub, tid, role: live.role, ...roles, sid, iat, exp, iss }
}

/** The public keys resource servers verify access tokens with; none with HS256. */
export function jwks(deps: Pick<Deps, 'tokens'>) {
  return deps.tokens.jwks()
}

/**
 * The session `sessionId` of `userId` while it is live (not revoked, not expired, its user
 * not deleted), with its user's status and role now: the hosted pages' check of a sign-in
 * they are about to use (web/pages/authorize.ts).
 */
export function liveSessionOf(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<LiveSession | undefined> {
  return findLiveSession(deps.db, tenantId, sessionId, userId, now)
}
