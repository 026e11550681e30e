// The queries of the sessions and refresh_tokens tables; no other file writes them.
// Single-use tokens are spent in one atomic statement (`UPDATE … WHERE used_at IS NULL`),
// never read-then-write.

import type { Db, Handle } from '../../db/client.ts'
import { and, eq, isNull, ne, sql } from '../../db/orm.ts'
import { namedStatement } from '../../db/prepared.ts'
import { refreshTokens, sessions } from '../../db/schema.ts'
import { type User, userFromRow } from '../users/queries.ts'

export interface NewSession {
  tenantId: string
  sessionId: string
  userId: string
  tokenHash: string
  now: Date
  expiresAt: Date
  ip: string | null
  userAgent: string | null
}

/** The session and its first refresh token, in one statement (one round trip). */
export async function insertSession(db: Handle, s: NewSession): Promise<void> {
  await db.execute(sql`
    WITH session AS (
      INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at, ip, user_agent)
      VALUES (${s.tenantId}, ${s.sessionId}, ${s.userId}, ${s.now}, ${s.expiresAt}, ${s.ip},
              ${s.userAgent?.slice(0, 512) ?? null})
    )
    INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at)
    VALUES (${s.tenantId}, ${s.tokenHash}, ${s.sessionId}, ${s.userId}, ${s.now}, ${s.expiresAt})
  `)
}

export interface Rotated {
  sessionId: string
  user: User
}

// The session outlives its newest token by up to a day, so it is extended about once a
// day of use rather than on every rotation: an UPDATE of `sessions` per refresh was a
// third of the statement's work (issue 10).
const SESSION_SLACK_MS = 86_400_000

const rotate = namedStatement(
  'rotate_refresh_token',
  `WITH spent AS (
     UPDATE refresh_tokens rt SET used_at = $3
     FROM sessions s, users u
     WHERE rt.tenant_id = $1 AND rt.token_hash = $2
       AND rt.used_at IS NULL AND rt.expires_at > $3
       AND s.tenant_id = rt.tenant_id AND s.id = rt.session_id AND s.revoked_at IS NULL
       AND u.tenant_id = rt.tenant_id AND u.id = rt.user_id
       AND u.deleted_at IS NULL AND u.status = 'Active'
     RETURNING rt.session_id, s.expires_at AS session_expires_at, u.*
   ), fresh AS (
     INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at)
     SELECT $1, $4, session_id, id, $3, $5 FROM spent
   ), extended AS (
     UPDATE sessions SET expires_at = $6
     WHERE tenant_id = $1
       AND id IN (SELECT session_id FROM spent WHERE session_expires_at < $5)
   )
   SELECT * FROM spent`,
)

/**
 * Spends the current token of a live session, stores its successor and reads the user,
 * in one statement (one round trip). Of N concurrent calls with one token, the row lock
 * lets exactly one UPDATE match; the others see `used_at` set, match nothing, and are
 * then treated as reuse by the caller.
 */
export async function rotateRefreshToken(
  db: Db,
  tenantId: string,
  oldHash: string,
  newHash: string,
  now: Date,
  expiresAt: Date,
): Promise<Rotated | undefined> {
  const extendTo = new Date(expiresAt.getTime() + SESSION_SLACK_MS)
  const [row] = await rotate(db, [tenantId, oldHash, now, newHash, expiresAt, extendTo])
  return row ? { sessionId: row.session_id as string, user: userFromRow(row) } : undefined
}

export interface TokenState {
  sessionId: string
  userId: string
  usedAt: Date | null
  expiresAt: Date
  revokedAt: Date | null
}

/** What a refresh token refers to, whatever its state. */
export async function findRefreshToken(db: Handle, tenantId: string, tokenHash: string) {
  const rows = await db
    .select({
      sessionId: refreshTokens.sessionId,
      userId: refreshTokens.userId,
      usedAt: refreshTokens.usedAt,
      expiresAt: refreshTokens.expiresAt,
      revokedAt: sessions.revokedAt,
    })
    .from(refreshTokens)
    .innerJoin(
      sessions,
      and(eq(sessions.tenantId, refreshTokens.tenantId), eq(sessions.id, refreshTokens.sessionId)),
    )
    .where(and(eq(refreshTokens.tenantId, tenantId), eq(refreshTokens.tokenHash, tokenHash)))
    .limit(1)
  return rows[0] as TokenState | undefined
}

/** Ends one session; answers whether it was live until now. */
export async function revokeSession(
  db: Handle,
  tenantId: string,
  sessionId: string,
  reason: string,
): Promise<boolean> {
  const rows = await db
    .update(sessions)
    // The database's clock, not the instance's, so every instance reads the revocation
    // feed against one clock; clock_timestamp() (not now(), the transaction's start) so a
    // transaction that waited for locks is not stamped earlier than it became visible.
    .set({ revokedAt: sql`clock_timestamp()`, revokeReason: reason })
    .where(
      and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId), isNull(sessions.revokedAt)),
    )
    .returning({ id: sessions.id })
  return rows.length > 0
}

/** Ends every live session of a user, but `keep`; answers the ids it ended. */
export async function revokeUserSessions(
  db: Handle,
  tenantId: string,
  userId: string,
  reason: string,
  keep?: string,
): Promise<string[]> {
  const rows = await db
    .update(sessions)
    // The database's clock, not the instance's, so every instance reads the revocation
    // feed against one clock; clock_timestamp() (not now(), the transaction's start) so a
    // transaction that waited for locks is not stamped earlier than it became visible.
    .set({ revokedAt: sql`clock_timestamp()`, revokeReason: reason })
    .where(
      and(
        eq(sessions.tenantId, tenantId),
        eq(sessions.userId, userId),
        isNull(sessions.revokedAt),
        keep ? ne(sessions.id, keep) : undefined,
      ),
    )
    .returning({ id: sessions.id })
  return rows.map((r) => r.id)
}

/**
 * Ends every live session of a tenant (its deletion, CONTRACT §9); answers the ids. The
 * rows stay, revoked, so the revocation feed carries them to every instance.
 */
export async function revokeTenantSessions(
  db: Handle,
  tenantId: string,
  reason: string,
): Promise<string[]> {
  const rows = await db
    .update(sessions)
    // The database's clock, as for every revocation (see revokeSession).
    .set({ revokedAt: sql`clock_timestamp()`, revokeReason: reason })
    .where(and(eq(sessions.tenantId, tenantId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id })
  return rows.map((r) => r.id)
}
