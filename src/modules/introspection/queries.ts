// Reads for token introspection. This module writes no table: sessions and users belong
// to their own modules' queries files; this is one read across both, named by tenant.

import type { Db } from '../../db/client.ts'
import { and, eq, gt, isNull, sql } from '../../db/orm.ts'
import { perDatabase } from '../../db/prepared.ts'
import { sessions, users } from '../../db/schema.ts'
import { isUuid } from '../../lib/ids.ts'
import { ROLE_NAMES_SQL } from '../roles/members.ts'

// Prepared: a resource server may introspect on every request it serves.
const liveSession = perDatabase((db: Db) =>
  db
    .select({
      role: users.role,
      status: users.status,
      signedInAt: sessions.createdAt,
      secondFactor: sessions.secondFactor,
      // The user's custom role names now, sorted (CONTRACT §17), in the same statement.
      roles: sql<string[]>`${sql.raw(ROLE_NAMES_SQL)}`,
    })
    .from(sessions)
    .innerJoin(users, and(eq(users.tenantId, sessions.tenantId), eq(users.id, sessions.userId)))
    .where(
      and(
        eq(sessions.tenantId, sql.placeholder('tenantId')),
        eq(sessions.id, sql.placeholder('sessionId')),
        eq(sessions.userId, sql.placeholder('userId')),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, sql.placeholder('now')),
        isNull(users.deletedAt),
      ),
    )
    .limit(1)
    .prepare('introspection_live_session'),
)

export interface LiveSession {
  role: string
  status: string
  /** The user's custom role names now, sorted. */
  roles: string[]
  /** When the session signed in (its `auth_time` for the OpenID provider). */
  signedInAt: Date
  /** Whether the session proved a second factor (CONTRACT §18 mfaRequired). */
  secondFactor: boolean
}

/**
 * A session of the service as it stands in the database, with its user: undefined when
 * revoked, past its family's expiry, another user's, or its user deleted. The one read
 * of a session's liveness, for introspection and the OpenID provider alike; each caller
 * says which user statuses it accepts.
 */
export async function findLiveSession(
  db: Db,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<LiveSession | undefined> {
  if (!isUuid(sessionId) || !isUuid(userId)) return undefined
  const rows = await liveSession(db).execute({ tenantId, sessionId, userId, now })
  return rows[0]
}

/** The user's current role and custom roles while the session is live and its user not suspended. */
export async function liveSessionRole(
  db: Db,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<{ role: string; roles: string[] } | undefined> {
  const found = await findLiveSession(db, tenantId, sessionId, userId, now)
  return found && found.status !== 'Suspended'
    ? { role: found.role, roles: found.roles ?? [] }
    : undefined
}
