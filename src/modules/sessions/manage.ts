// The sessions a user can see and end (CONTRACT §9): GET and DELETE me/sessions for the
// signed-in user, and users/{userId}/sessions for an administrator. A session is shown
// while it can still be used: not revoked, neither it nor its current refresh token
// expired. Ending one goes through the revocation path of every other ending (§4).
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { type Page, readPage } from '../../lib/paging.ts'
import type { Actor } from '../audit/recorder.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById } from '../users/reads.ts'
import { listLiveSessions, type SessionRow } from './queries.ts'
import type { ListSessionsQuery } from './schemas.ts'

export interface SessionItem {
  id: string
  createdAt: string
  lastUsedAt: string
  ip: string | null
  userAgent: string | null
  current: boolean
}

/** A page of the user's live sessions, newest first; `current` marks the asking one. */
export function listSessionPage(
  deps: Pick<Deps, 'db' | 'clock'>,
  tenantId: string,
  userId: string,
  query: ListSessionsQuery,
  currentSessionId?: string,
): Promise<Page<SessionItem>> {
  const now = deps.clock.now()
  return readPage(
    query,
    ({ limit, after }) =>
      listLiveSessions(deps.db, tenantId, userId, { limit, afterId: after, now }),
    (row: SessionRow) => ({
      id: row.id,
      createdAt: row.createdAt.toISOString(),
      lastUsedAt: row.lastUsedAt.toISOString(),
      ip: row.ip,
      userAgent: row.userAgent,
      current: row.id === currentSessionId,
    }),
  )
}

/** DELETE me/sessions/{id}: the session it signs in with too, which then acts as logout. */
export async function endOwnSession(
  deps: Pick<Deps, 'sessions'>,
  tenant: Tenant,
  principal: { userId: string; sessionId: string },
  sessionId: string,
  actor: Actor,
): Promise<void> {
  const { userId } = principal
  if (sessionId === principal.sessionId) {
    await deps.sessions.revokeOne(tenant, userId, sessionId, actor, 'logout', [
      { action: 'UserLogout', userId, metadata: { sessionId } },
    ])
    return
  }
  await deps.sessions.revokeOne(tenant, userId, sessionId, actor, 'revoked-by-user')
}

/** The live user an administrator names, or 404 `not_found` (unknown, deleted, other tenant). */
export async function requireUser(deps: Pick<Deps, 'db'>, tenantId: string, userId: string) {
  const user = await findUserById(deps.db, tenantId, userId)
  if (!user) fail('not_found')
  return user
}

/** DELETE users/{userId}/sessions/{id}. */
export async function endUserSession(
  deps: Pick<Deps, 'db' | 'sessions'>,
  tenant: Tenant,
  userId: string,
  sessionId: string,
  actor: Actor,
): Promise<void> {
  await requireUser(deps, tenant.id, userId)
  await deps.sessions.revokeOne(tenant, userId, sessionId, actor, 'revoked-by-admin')
}
