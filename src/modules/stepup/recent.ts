// Recent authentication (CONTRACT §16; OWASP ASVS 5.0 asks for it before factors change):
// adding or changing a way to sign in needs a session that proved a sign-in factor within
// the last 10 minutes. A session proves one when it is signed in (any method: SPEC's enrol
// right after login is inside the window) and when it reauthenticates (stepup/service.ts);
// a refresh does not, so an access token alone, renewed as often as its thief likes, cannot
// register a passkey, begin TOTP enrolment, remove a passkey or delete the account.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { lastProofOf } from '../sessions/proofs.ts'

/** How long a proof of a factor lets the session change how it signs in (seconds). */
export const RECENT_AUTHENTICATION_SECONDS = 10 * 60

/**
 * 401 `reauthentication_required` unless the signed-in session proved a factor in the last
 * 10 minutes of the clock; 401 `session_revoked` when the session has ended meanwhile
 * (the revocation cache may not have heard yet).
 */
export async function requireRecentAuthentication(
  deps: Pick<Deps, 'clock' | 'db'>,
  tenantId: string,
  principal: { userId: string; sessionId: string },
): Promise<void> {
  const now = deps.clock.now()
  const proved = await lastProofOf(deps.db, tenantId, principal.userId, principal.sessionId, now)
  if (!proved) fail('session_revoked')
  if (now.getTime() - proved.getTime() > RECENT_AUTHENTICATION_SECONDS * 1000) {
    fail('reauthentication_required')
  }
}
