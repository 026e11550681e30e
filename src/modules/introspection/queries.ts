// Reads for token introspection. This module writes no table: sessions and users belong
// to their own modules' queries files; this is one read across both, named by tenant.

import type { Db } from '../../db/client.ts'
import { and, eq, gt, isNull, ne, sql } from '../../db/orm.ts'
import { perDatabase } from '../../db/prepared.ts'
import { sessions, users } from '../../db/schema.ts'

// Prepared: a resource server may introspect on every request it serves.
const liveSession = perDatabase((db: Db) =>
  db
    .select({ role: users.role })
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
        ne(users.status, 'Suspended'),
      ),
    )
    .limit(1)
    .prepare('introspection_live_session'),
)

/**
 * The user's current role while the session is still live in the database (not revoked,
 * not past its family's expiry, its user neither deleted nor suspended); else undefined.
 */
export async function liveSessionRole(
  db: Db,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<string | undefined> {
  const rows = await liveSession(db).execute({ tenantId, sessionId, userId, now })
  return rows[0]?.role
}
