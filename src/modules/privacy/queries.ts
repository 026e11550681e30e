// The reads of a personal-data export (CONTRACT §9). This module owns no table: every
// query here reads, tenant first, and the erasure writes through the owners' queries.
import type { Handle } from '../../db/client.ts'
import { and, asc, eq, isNull, sql } from '../../db/orm.ts'
import { identities, passkeys, recoveryCodes, ssoConnections } from '../../db/schema.ts'

export interface SessionRow {
  id: string
  createdAt: Date
  expiresAt: Date
  revokedAt: Date | null
  signInIp: string | null
  signInUserAgent: string | null
  lastUsedAt: Date
  ip: string | null
  userAgent: string | null
}

const date = (v: Date | string) => (v instanceof Date ? v : new Date(v))
const maybeDate = (v: Date | string | null) => (v === null ? null : date(v))

/**
 * The user's sessions, live and ended, newest first, `limit` of them: each with where it
 * was opened and its newest refresh token (where and when it was last used).
 */
export async function sessionsOf(
  db: Handle,
  tenantId: string,
  userId: string,
  limit: number,
): Promise<SessionRow[]> {
  const result = (await db.execute(sql`
    SELECT s.id, s.created_at, s.expires_at, s.revoked_at, s.ip, s.user_agent,
      r.created_at AS last_used_at, r.ip AS last_ip, r.user_agent AS last_user_agent
    FROM sessions s
    LEFT JOIN LATERAL (
      SELECT t.created_at, t.ip, t.user_agent FROM refresh_tokens t
      WHERE t.tenant_id = s.tenant_id AND t.session_id = s.id
      ORDER BY t.created_at DESC, (t.used_at IS NULL) DESC LIMIT 1
    ) r ON true
    WHERE s.tenant_id = ${tenantId} AND s.user_id = ${userId}
    ORDER BY s.created_at DESC, s.id DESC
    LIMIT ${limit}
  `)) as unknown as { rows: Record<string, string | Date | null>[] }
  return result.rows.map((r) => ({
    id: r.id as string,
    createdAt: date(r.created_at as Date),
    expiresAt: date(r.expires_at as Date),
    revokedAt: maybeDate(r.revoked_at as Date | null),
    signInIp: r.ip as string | null,
    signInUserAgent: r.user_agent as string | null,
    lastUsedAt: date((r.last_used_at ?? r.created_at) as Date),
    // Tokens issued before their origin was recorded have none: the sign-in's then.
    ip: (r.last_ip ?? r.ip) as string | null,
    userAgent: (r.last_user_agent ?? r.user_agent) as string | null,
  }))
}

/**
 * The user's identities at every source (CONTRACT §19), oldest first; one at an SSO
 * connection (§12) with the issuer (OIDC) or entity id (SAML) of its connection's IdP.
 */
export async function identitiesOf(db: Handle, tenantId: string, userId: string) {
  return db
    .select({
      kind: identities.kind,
      source: identities.source,
      subject: identities.subject,
      email: identities.email,
      createdAt: identities.createdAt,
      connectionIssuer: sql<string>`coalesce(${ssoConnections.oidcIssuer}, ${ssoConnections.samlIdpEntityId}, '')`,
    })
    .from(identities)
    .leftJoin(
      ssoConnections,
      and(
        eq(identities.kind, 'sso'),
        eq(ssoConnections.tenantId, identities.tenantId),
        // The source is text for every kind; the connection's id is compared as text so
        // that no other kind's source is ever cast to a uuid.
        sql`${ssoConnections.id}::text = ${identities.source}`,
      ),
    )
    .where(and(eq(identities.tenantId, tenantId), eq(identities.userId, userId)))
    .orderBy(asc(identities.createdAt), asc(identities.id))
}

/** The user's passkeys, without the public key or the counter. */
export async function passkeysOf(db: Handle, tenantId: string, userId: string) {
  return db
    .select({
      id: passkeys.id,
      name: passkeys.name,
      deviceType: passkeys.deviceType,
      backedUp: passkeys.backedUp,
      createdAt: passkeys.createdAt,
      lastUsedAt: passkeys.lastUsedAt,
    })
    .from(passkeys)
    .where(and(eq(passkeys.tenantId, tenantId), eq(passkeys.userId, userId)))
    .orderBy(asc(passkeys.createdAt), asc(passkeys.id))
}

export async function countUnusedRecoveryCodes(db: Handle, tenantId: string, userId: string) {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(recoveryCodes)
    .where(
      and(
        eq(recoveryCodes.tenantId, tenantId),
        eq(recoveryCodes.userId, userId),
        isNull(recoveryCodes.usedAt),
      ),
    )
  return Number(row?.n ?? 0)
}
