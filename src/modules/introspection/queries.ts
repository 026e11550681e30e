// Reads for token introspection. This module writes no table: sessions and users belong
// to their own modules' queries files; this is one read across both, named by tenant.

import type { Db } from '../../db/client.ts'
import { and, eq, gt, isNull, ne, sql } from '../../db/orm.ts'
import { perDatabase } from '../../db/prepared.ts'
import { sessions, users } from '../../db/schema.ts'

// Prepared: a resource server may introspect on every request it serves.
const liveSession = perDatabase((db: Db) =>
  db
    .select({ id: sessions.id })
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
 * Whether the session is still live in the database: not revoked, not past its family's
 * expiry, and its user neither deleted nor suspended.
 */
export async function isSessionLive(
  db: Db,
  tenantId: string,
  sessionId: string,
  userId: string,
  now: Date,
): Promise<boolean> {
  const rows = await liveSession(db).execute({ tenantId, sessionId, userId, now })
  return rows.length > 0
}
