// The queries of the sessions and refresh_tokens tables; no other file writes them.
// Single-use tokens are spent in one atomic statement (`UPDATE … WHERE used_at IS NULL`),
// never read-then-write.

import type { Db, Handle } from '../../db/client.ts'
import { and, eq, gt, isNull, ne, sql } from '../../db/orm.ts'
import { namedStatement } from '../../db/prepared.ts'
import { refreshTokens, sessions } from '../../db/schema.ts'
import { heldRoleNamesJson, roleNamesFromJson } from '../roles/members.ts'
import { type User, userFromRow } from '../users/reads.ts'
import type { PriorDevice } from './devices.ts'

export interface NewSession {
  tenantId: string
  sessionId: string
  userId: string
  tokenHash: string
  now: Date
  expiresAt: Date
  ip: string | null
  userAgent: string | null
  /**
   * When set, the same statement also reads the (ip, user agent) pairs of the user's
   * earlier sessions, `recent` when one of them expires after this time (the new-device
   * check, CONTRACT §9): no extra round trip on the sign-in path.
   */
  recentIfExpiresAfter?: Date
}

/** A User-Agent as stored: at most 512 characters. */
const storedAgent = (userAgent: string | null) => userAgent?.slice(0, 512) ?? null

const INSERT_SESSION = `
  WITH session AS (
    INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at, ip, user_agent)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
  ), token AS (
    INSERT INTO refresh_tokens
      (tenant_id, token_hash, session_id, user_id, created_at, expires_at, ip, user_agent)
    VALUES ($1, $8, $2, $3, $4, $5, $6, $7)
  )`

// The user's custom role names come back from the same statement (the token's `roles`
// claim and the envelope's user): a second query of the sign-in's transaction before.
const HELD_ROLES = heldRoleNamesJson('$1', '$3')

const startSession = namedStatement(
  'start_session',
  `${INSERT_SESSION} SELECT ${HELD_ROLES} AS held_roles`,
)

// The user's distinct (ip, user agent) pairs, walked in the index sessions_tenant_user_device
// one probe a pair (a recursive loose index scan: PostgreSQL 15 has no skip scan), each
// with its latest expiry read from the same index: the cost follows the number of pairs,
// not of sessions (a GROUP BY of every session of the user took 49 ms at 100,000). A
// missing and an empty address or agent are one pair here, as they are one device key
// (sessions/devices.ts). With none left (all ended long ago and purged), the
// audit log tells a returning user from a first sign-in: a row with no device and `recent`
// false says "had sessions, none known" (index audit_tenant_user_created; read only then).
const startSessionReadingDevices = namedStatement(
  'start_session_devices',
  `${INSERT_SESSION}, device(ip, agent) AS (
     WITH RECURSIVE walk(ip, agent) AS (
       (SELECT coalesce(ip, ''), coalesce(user_agent, '') FROM sessions
        WHERE tenant_id = $1 AND user_id = $3
        ORDER BY 1, 2 LIMIT 1)
       UNION ALL
       SELECT n.ip, n.agent FROM walk w CROSS JOIN LATERAL (
         SELECT coalesce(s.ip, '') AS ip, coalesce(s.user_agent, '') AS agent FROM sessions s
         WHERE s.tenant_id = $1 AND s.user_id = $3
           AND (coalesce(s.ip, ''), coalesce(s.user_agent, '')) > (w.ip, w.agent)
         ORDER BY 1, 2 LIMIT 1) n
     )
     SELECT ip, agent FROM walk LIMIT $10
   ), prior AS (
     SELECT nullif(d.ip, '') AS ip, nullif(d.agent, '') AS user_agent,
       (SELECT max(s.expires_at) FROM sessions s
        WHERE s.tenant_id = $1 AND s.user_id = $3
          AND coalesce(s.ip, '') = d.ip AND coalesce(s.user_agent, '') = d.agent) > $9 AS recent
     FROM device d
   ), seen AS (
     SELECT ip, user_agent, recent FROM prior
     UNION ALL
     SELECT NULL, NULL, false
     WHERE NOT EXISTS (SELECT 1 FROM prior)
       AND EXISTS (
         SELECT 1 FROM audit_events a
         WHERE a.tenant_id = $1 AND a.user_id = $3 AND a.action = 'SessionCreated')
   )
   SELECT seen.ip, seen.user_agent, seen.recent, held.roles AS held_roles
   FROM (SELECT ${HELD_ROLES} AS roles) held LEFT JOIN seen ON true`,
)

/** What starting a session read in the same statement. */
export interface StartedSession {
  /** The user's custom role names, sorted (roles/members.ts). */
  roles: string[]
  /** The user's earlier devices, when `recentIfExpiresAfter` was given (else none). */
  prior: PriorDevice[]
}

/**
 * The session and its first refresh token (which records where it was issued), and the
 * user's custom role names, in one statement (one round trip); with
 * `recentIfExpiresAfter`, the user's earlier devices too.
 * Every part of one statement reads the snapshot from before it, so the new session is not
 * among them. Named statements: every sign-in runs one, and planning the CTE again each
 * time cost PostgreSQL more than running it (issue 10).
 */
export async function insertSession(db: Handle, s: NewSession): Promise<StartedSession> {
  const values = [
    s.tenantId,
    s.sessionId,
    s.userId,
    s.now,
    s.expiresAt,
    s.ip,
    storedAgent(s.userAgent),
    s.tokenHash,
  ]
  if (!s.recentIfExpiresAfter) {
    const [row] = await startSession(db, values)
    return { roles: roleNamesFromJson(row?.held_roles), prior: [] }
  }
  const rows = await startSessionReadingDevices(db, [
    ...values,
    s.recentIfExpiresAfter,
    PRIOR_DEVICES,
  ])
  // One row at least (the roles'); a row without `recent` stands for no device at all.
  return {
    roles: roleNamesFromJson(rows[0]?.held_roles),
    prior: rows
      .filter((r) => r.recent !== null && r.recent !== undefined)
      .map((r) => ({
        ip: r.ip as string | null,
        userAgent: r.user_agent as string | null,
        recent: r.recent as boolean,
      })),
  }
}

/**
 * The most (ip, user agent) pairs the new-device check reads: a bound on the work (a pair
 * past it, in the index's order, counts as unseen).
 */
const PRIOR_DEVICES = 1000

export interface Rotated {
  sessionId: string
  user: User
  /** The user's custom role names, sorted, read by the rotation's own statement. */
  roles: string[]
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
     INSERT INTO refresh_tokens
       (tenant_id, token_hash, session_id, user_id, created_at, expires_at, ip, user_agent)
     SELECT $1, $4, session_id, id, $3, $5, $7, $8 FROM spent
   ), extended AS (
     UPDATE sessions SET expires_at = $6
     WHERE tenant_id = $1
       AND id IN (SELECT session_id FROM spent WHERE session_expires_at < $5)
   )
   SELECT spent.*, ${heldRoleNamesJson('$1', 'spent.id')} AS held_roles FROM spent`,
)

/**
 * Spends the current token of a live session, stores its successor (with where it was
 * issued: the session's lastUsedAt, ip and userAgent) and reads the user with its custom
 * role names, in one statement (one round trip; the roles were a second query of every
 * refresh once tokens carried them). Of N concurrent calls with one token, the row lock
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
  from: { ip: string | null; userAgent: string | null },
): Promise<Rotated | undefined> {
  const extendTo = new Date(expiresAt.getTime() + SESSION_SLACK_MS)
  const [row] = await rotate(db, [
    tenantId,
    oldHash,
    now,
    newHash,
    expiresAt,
    extendTo,
    from.ip,
    storedAgent(from.userAgent),
  ])
  if (!row) return undefined
  return {
    sessionId: row.session_id as string,
    user: userFromRow(row),
    roles: roleNamesFromJson(row.held_roles),
  }
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

/** A live session as the session lists show it (CONTRACT §9). */
export interface SessionRow {
  id: string
  createdAt: Date
  lastUsedAt: Date
  ip: string | null
  userAgent: string | null
}

const toDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)))

/**
 * A page of the user's live sessions (not revoked, neither the session nor its current
 * refresh token expired), newest first, after the session `afterId` (a cursor names a
 * row; its sort key is read in the same query). lastUsedAt, ip and userAgent are those of
 * the current refresh token: the unspent one, else the newest (where the last sign-in or
 * refresh came from); a token older than those columns falls back on the session's own.
 */
export async function listLiveSessions(
  db: Handle,
  tenantId: string,
  userId: string,
  options: { limit: number; afterId?: string; now: Date },
): Promise<SessionRow[]> {
  const { limit, afterId, now } = options
  const after = afterId
    ? sql`AND (s.created_at, s.id) < (
        SELECT c.created_at, c.id FROM sessions c
        WHERE c.tenant_id = ${tenantId} AND c.user_id = ${userId} AND c.id = ${afterId})`
    : sql``
  const result = (await db.execute(sql`
    SELECT s.id, s.created_at, t.created_at AS last_used_at,
           COALESCE(t.ip, s.ip) AS ip, COALESCE(t.user_agent, s.user_agent) AS user_agent
    FROM sessions s
    JOIN LATERAL (
      SELECT r.created_at, r.expires_at, r.ip, r.user_agent FROM refresh_tokens r
      WHERE r.tenant_id = s.tenant_id AND r.session_id = s.id
      ORDER BY (r.used_at IS NULL) DESC, r.created_at DESC
      LIMIT 1
    ) t ON t.expires_at > ${now}
    WHERE s.tenant_id = ${tenantId} AND s.user_id = ${userId}
      AND s.revoked_at IS NULL AND s.expires_at > ${now}
      ${after}
    ORDER BY s.created_at DESC, s.id DESC
    LIMIT ${limit}
  `)) as unknown as { rows: Record<string, unknown>[] }
  return result.rows.map((r) => ({
    id: r.id as string,
    createdAt: toDate(r.created_at),
    lastUsedAt: toDate(r.last_used_at),
    ip: (r.ip as string | null) ?? null,
    userAgent: (r.user_agent as string | null) ?? null,
  }))
}

/** Ends one live session of a user; answers whether there was one to end. */
export async function revokeUserSession(
  db: Handle,
  tenantId: string,
  userId: string,
  sessionId: string,
  reason: string,
  now: Date,
): Promise<boolean> {
  const rows = await db
    .update(sessions)
    // The database's clock, as revokeSession above explains.
    .set({ revokedAt: sql`clock_timestamp()`, revokeReason: reason })
    .where(
      and(
        eq(sessions.tenantId, tenantId),
        eq(sessions.userId, userId),
        eq(sessions.id, sessionId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
      ),
    )
    .returning({ id: sessions.id })
  return rows.length > 0
}

/**
 * When a live session of the user last proved a sign-in factor (CONTRACT §16): its sign-in
 * (created_at) or its latest reauthentication, whichever is later; undefined when the
 * session is not the user's, has ended or expired. A refresh changes neither column.
 */
export async function lastProofOf(
  db: Handle,
  tenantId: string,
  userId: string,
  sessionId: string,
  now: Date,
): Promise<Date | undefined> {
  const rows = await db
    .select({ createdAt: sessions.createdAt, reauthenticatedAt: sessions.reauthenticatedAt })
    .from(sessions)
    .where(liveSessionOf(tenantId, userId, sessionId, now))
    .limit(1)
  const row = rows[0]
  if (!row) return undefined
  const again = row.reauthenticatedAt
  return again && again > row.createdAt ? again : row.createdAt
}

/**
 * Records that the live session `sessionId` of the user proved a factor again at `now`
 * (POST me/reauthenticate); false when it has ended or expired meanwhile. Only that
 * session: the user's other sessions keep their own time.
 */
export async function stampReauthentication(
  db: Handle,
  tenantId: string,
  userId: string,
  sessionId: string,
  now: Date,
): Promise<boolean> {
  const rows = await db
    .update(sessions)
    .set({ reauthenticatedAt: now })
    .where(liveSessionOf(tenantId, userId, sessionId, now))
    .returning({ id: sessions.id })
  return rows.length > 0
}

const liveSessionOf = (tenantId: string, userId: string, sessionId: string, now: Date) =>
  and(
    eq(sessions.tenantId, tenantId),
    eq(sessions.id, sessionId),
    eq(sessions.userId, userId),
    isNull(sessions.revokedAt),
    gt(sessions.expiresAt, now),
  )
