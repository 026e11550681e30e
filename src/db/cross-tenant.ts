// Queries that cross tenants on purpose, in one file so that tenant isolation can be
// audited in one place: every other query names its tenant. Each is maintenance or a
// lookup whose key is itself global (a token hash). Key rotation's scan of the sealed
// columns crosses tenants too; it is written once, in db/sealed-column.ts.

import type { Invite } from '../modules/invites/pending.ts'
import type { Tenant } from '../modules/tenants/tenant.ts'
import { FLUSH_LATER, type Handle } from './client.ts'
import { and, asc, eq, isNotNull, isNull, type SQL, sql } from './orm.ts'
import { emailConflicts, invites, sessions, tenants } from './schema.ts'

export interface PurgedUser {
  tenantId: string
  id: string
  deletedAt: Date
}

/**
 * Hard-deletes up to `limit` users soft-deleted before `cutoff`, across tenants (the purge
 * is a system job; the partial index users_deleted_at finds them). Sessions, refresh
 * tokens, codes and linked identities go with them (ON DELETE CASCADE). SKIP LOCKED lets
 * several instances purge at once without two of them taking the same user.
 */
export async function purgeDeletedUsers(
  db: Handle,
  cutoff: Date,
  limit: number,
): Promise<PurgedUser[]> {
  const result = (await db.execute(sql`
    DELETE FROM users u
    USING (
      SELECT tenant_id, id FROM users
      WHERE deleted_at IS NOT NULL AND deleted_at < ${cutoff}
      ORDER BY deleted_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) expired
    WHERE u.tenant_id = expired.tenant_id AND u.id = expired.id
    RETURNING u.tenant_id, u.id, u.deleted_at
  `)) as unknown as { rows: { tenant_id: string; id: string; deleted_at: Date | string }[] }
  return result.rows.map((r) => ({
    tenantId: r.tenant_id,
    id: r.id,
    deletedAt: r.deleted_at instanceof Date ? r.deleted_at : new Date(r.deleted_at),
  }))
}

export interface DeletedTenant {
  id: string
  slug: string
  deletedAt: Date
}

/**
 * Tenants soft-deleted before `cutoff` (CONTRACT §9), oldest first. The tenants table is
 * small (a row per workspace), so a daily scan of it needs no index.
 */
export async function deletedTenantsBefore(
  db: Handle,
  cutoff: Date,
  limit: number,
): Promise<DeletedTenant[]> {
  const rows = await db
    .select({ id: tenants.id, slug: tenants.slug, deletedAt: tenants.deletedAt })
    .from(tenants)
    .where(and(isNotNull(tenants.deletedAt), sql`${tenants.deletedAt} < ${cutoff}`))
    .orderBy(asc(tenants.deletedAt), asc(tenants.id))
    .limit(limit)
  return rows as DeletedTenant[]
}

/**
 * The tables that reference no tenant or user row (no cascade reaches them), then the
 * OpenID provider's models (a busy tenant's grow like its sessions), then the users (whose
 * rows cascade to sessions, refresh tokens, codes, identities, passkeys and recovery
 * codes): each emptied of the tenant's rows in bounded statements before the tenant row
 * goes (cascading to logos, API keys, invites, OAuth states, WebAuthn challenges,
 * applications and API resources).
 */
export const TENANT_PURGE_ORDER = [
  'audit_events',
  'email_conflicts',
  'oidc_models',
  'users',
] as const

/**
 * Removes a tenant soft-deleted before `cutoff` and every row it owns, `batch` rows per
 * statement so that no statement holds a large tenant's millions of row locks. Every
 * statement names the tenant and checks again that it is deleted and past the cutoff, so a
 * live tenant can never lose a row here. Answers the rows removed (cascades not counted),
 * 0 when the tenant is not (or no longer) there to purge.
 */
export async function purgeTenant(
  db: Handle,
  tenantId: string,
  cutoff: Date,
  batch: number,
): Promise<number> {
  const expired = sql`EXISTS (SELECT 1 FROM tenants d
    WHERE d.id = ${tenantId} AND d.deleted_at IS NOT NULL AND d.deleted_at < ${cutoff})`
  let removed = 0
  for (const table of TENANT_PURGE_ORDER) {
    const name = sql.raw(table)
    for (;;) {
      const result = (await db.execute(sql`
        DELETE FROM ${name} WHERE ctid IN (
          SELECT t.ctid FROM ${name} t WHERE t.tenant_id = ${tenantId} AND ${expired}
          LIMIT ${batch}
        )
        RETURNING 1
      `)) as unknown as { rows: unknown[] }
      const count = result.rows.length
      removed += count
      if (count < batch) break
    }
  }
  const gone = await db
    .delete(tenants)
    .where(
      and(
        eq(tenants.id, tenantId),
        isNotNull(tenants.deletedAt),
        sql`${tenants.deletedAt} < ${cutoff}`,
      ),
    )
    .returning({ id: tenants.id })
  return removed + gone.length
}

/** The tables whose dead rows the purge prunes, in the order it prunes them. */
export const PRUNED_TABLES = [
  'refresh_tokens',
  'sessions',
  'one_time_codes',
  'oauth_states',
  'webauthn_challenges',
  'oidc_models',
  'sso_saml_assertions',
  'remembered_devices',
] as const
export type PrunedTable = (typeof PRUNED_TABLES)[number]

/**
 * Tables with an expiry whose expired rows are kept on purpose, and why (test/tables.test.ts
 * requires every table with `expires_at` to be pruned or named here).
 */
export const NOT_PRUNED: Record<string, string> = {
  api_keys:
    'an expired key stays listed (as expired) until an admin revokes or deletes it: it is the record of who could call the API',
  organization_invitations:
    'an expired invitation to an organization stays listed as expired (CONTRACT §18), until the organization goes',
  invites:
    'an expired invitation stays listed as expired, and a late accept must find it to record InviteExpired',
}

/**
 * When a row can never be used again and has been so since before `cutoff`. Nothing else
 * deletes these rows: without the purge every refresh leaves its spent token behind, every
 * code and OAuth state stays after it expired, and every ended session stays for good.
 *   refresh_tokens  expired (spent or not): it can only fail, and past the grace a late
 *                   replay answers token_invalid instead of reporting reuse
 *   sessions        expired or revoked 60 days before `cutoff` (the new-device check reads
 *                   90 days of them), with no refresh token left (so nothing cascades;
 *                   the revocation feed reads only the last minutes)
 *   one_time_codes, oauth_states, webauthn_challenges  expired
 *   oidc_models     expired (codes, tokens, grants, sessions, interactions of the OpenID
 *                   provider; the adapter already ignores them; rows without an expiry,
 *                   registered clients, stay)
 *   sso_saml_assertions  expired: past its NotOnOrAfter an assertion is refused anyway,
 *                   so its id need not be remembered to refuse a replay
 *   remembered_devices  expired (CONTRACT §21): the device is asked its second factor again
 */
/** 60 days: with the purge's 30, an ended session stays at least the 90 days §9 speaks of. */
const SESSION_MEMORY_MS = 60 * 24 * 60 * 60 * 1000

function deadRow(table: PrunedTable, cutoff: Date): SQL {
  switch (table) {
    case 'sessions': {
      // Kept SESSION_MEMORY_MS longer than the other dead rows: the new-device check
      // (CONTRACT §9) reads the devices of the user's sessions of the last 90 days, and
      // an ended session is the only record of one.
      const kept = new Date(cutoff.getTime() - SESSION_MEMORY_MS)
      return sql`(t.expires_at < ${kept} OR t.revoked_at < ${kept})
        AND NOT EXISTS (
          SELECT 1 FROM refresh_tokens r WHERE r.tenant_id = t.tenant_id AND r.session_id = t.id)`
    }
    default:
      return sql`t.expires_at < ${cutoff}`
  }
}

/**
 * Deletes the dead rows of `table` (deadRow) in bounded statements, `batch` rows each:
 * DELETE … WHERE ctid IN (SELECT ctid … LIMIT batch), each its own short transaction, so
 * no statement holds millions of row locks or writes its whole WAL at once, and requests
 * go on meanwhile. The walk goes forward in physical order (the next statement starts
 * after the last row deleted), so a pass reads the table once however many rows go;
 * rows that die during the pass are left for the next run. Answers how many rows went and
 * in how many statements.
 */
export async function pruneDeadRows(
  db: Handle,
  table: PrunedTable,
  cutoff: Date,
  batch: number,
): Promise<{ deleted: number; statements: number }> {
  const name = sql.raw(table)
  let after = { page: 0, item: 0 }
  let deleted = 0
  let statements = 0
  for (;;) {
    // A literal (from two integers), so the planner can start the scan at that page.
    const from = sql.raw(`'(${after.page},${after.item})'::tid`)
    const result = (await db.execute(sql`
      DELETE FROM ${name} WHERE ctid IN (
        SELECT t.ctid FROM ${name} t
        WHERE t.ctid > ${from} AND ${deadRow(table, cutoff)}
        LIMIT ${batch}
      )
      RETURNING ctid::text AS ctid
    `)) as unknown as { rows: { ctid: string }[] }
    statements++
    deleted += result.rows.length
    for (const { ctid } of result.rows) {
      const [page, item] = ctid.slice(1, -1).split(',').map(Number)
      if (page > after.page || (page === after.page && item > after.item)) after = { page, item }
    }
    if (result.rows.length < batch) return { deleted, statements }
  }
}

/**
 * Live accounts that migration 0002 found sharing an address once normalised to NFC, in
 * every tenant: for the start-up report.
 */
export async function countEmailConflicts(db: Handle): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(emailConflicts)
  return row?.n ?? 0
}

/** The invitation of a token, with its (live) tenant. */
export async function findInviteByTokenHash(
  db: Handle,
  tokenHash: string,
): Promise<{ invite: Invite; tenant: Tenant } | undefined> {
  const rows = await db
    .select({ invite: invites, tenant: tenants })
    .from(invites)
    .innerJoin(tenants, and(eq(tenants.id, invites.tenantId), isNull(tenants.deletedAt)))
    .where(eq(invites.tokenHash, tokenHash))
    .limit(1)
  return rows[0]
}

export interface RevokedSession {
  id: string
  revokedAt: Date
}

/**
 * The revocation feed: sessions of every tenant revoked in the last `windowMs`, in
 * (revoked_at, id) order, `limit` after `after`. Every instance reads it to refuse the
 * access tokens of sessions ended elsewhere (CONTRACT §4).
 */
export async function revokedSessionsSince(
  db: Handle,
  windowMs: number,
  after: RevokedSession | undefined,
  limit: number,
): Promise<RevokedSession[]> {
  const rows = await db
    .select({ id: sessions.id, revokedAt: sessions.revokedAt })
    .from(sessions)
    .where(
      and(
        sql`${sessions.revokedAt} > now() - make_interval(secs => ${windowMs / 1000})`,
        after
          ? sql`(${sessions.revokedAt}, ${sessions.id}) > (${after.revokedAt}::timestamptz, ${after.id}::uuid)`
          : undefined,
      ),
    )
    .orderBy(asc(sessions.revokedAt), asc(sessions.id))
    .limit(limit)
  return rows as RevokedSession[]
}

/**
 * The webhook worker's claim (CONTRACT §13): up to `limit` due pending deliveries of any
 * tenant, taken with FOR UPDATE SKIP LOCKED in this one statement's transaction, their
 * next_attempt_at moved to `leaseUntil` and their attempt counted, so another instance
 * skips them now and takes them again only if this one dies before answering. Its commit
 * does not wait for the disk (FLUSH_LATER): a claim lost in a crash only frees the delivery.
 * `tenants` keeps it to those (a test's worker on the shared test database).
 */
export async function claimDueDeliveries(
  db: Handle,
  now: Date,
  leaseUntil: Date,
  limit: number,
  tenants?: readonly string[],
): Promise<{ tenantId: string; id: string }[]> {
  const only = tenants ? sql`AND tenant_id = ANY(${sql.param(tenants)}::uuid[])` : sql``
  const result = await db.execute(sql`
    UPDATE webhook_deliveries d
    SET next_attempt_at = ${leaseUntil.toISOString()}::timestamptz, attempts = d.attempts + 1
    FROM (
      SELECT tenant_id, id FROM webhook_deliveries
      WHERE status = 'Pending' AND next_attempt_at <= ${now.toISOString()}::timestamptz ${only}
      ORDER BY next_attempt_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) due
    WHERE d.tenant_id = due.tenant_id AND d.id = due.id AND ${FLUSH_LATER}
    RETURNING d.tenant_id, d.id`)
  const rows = (result as unknown as { rows: { tenant_id: string; id: string }[] }).rows
  return rows.map((r) => ({ tenantId: r.tenant_id, id: r.id }))
}

/**
 * The webhook queue across tenants, for /metrics: pending deliveries (those claimed and in
 * flight included), those due at `now`, and when the oldest due one fell due (null when
 * none is). Reads the partial index of pending rows only.
 */
export async function webhookQueue(
  db: Handle,
  now: Date,
): Promise<{ pending: number; due: number; oldestDueAt: Date | null }> {
  const at = sql`${now.toISOString()}::timestamptz`
  const result = await db.execute(sql`
    SELECT count(*)::int AS pending,
      count(*) FILTER (WHERE next_attempt_at <= ${at})::int AS due,
      min(next_attempt_at) FILTER (WHERE next_attempt_at <= ${at}) AS oldest
    FROM webhook_deliveries WHERE status = 'Pending'`)
  const [row] = (
    result as unknown as {
      rows: { pending: number; due: number; oldest: string | Date | null }[]
    }
  ).rows
  return {
    pending: Number(row.pending),
    due: Number(row.due),
    oldestDueAt: row.oldest === null ? null : new Date(row.oldest),
  }
}
