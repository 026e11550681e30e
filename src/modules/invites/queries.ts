// The queries of the invites table; no other file writes it. Every query names the
// tenant (the lookup by token hash, which names none, is in db/cross-tenant.ts).

import type { Handle } from '../../db/client.ts'
import { and, desc, eq, gt, isNull, sql } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { invites } from '../../db/schema.ts'

export type Invite = typeof invites.$inferSelect
export type NewInvite = typeof invites.$inferInsert

/** Still open: neither accepted nor revoked (it may have expired). */
const open = and(isNull(invites.acceptedAt), isNull(invites.revokedAt))

/**
 * Serialises invitation changes for one address of one tenant until the commit, so two
 * parallel invites cannot both find no older one and leave two pending.
 */
export async function lockAddress(tx: Handle, tenantId: string, emailNormalized: string) {
  await tx.execute(
    sql`SELECT pg_advisory_xact_lock(hashtext(${`invite:${tenantId}:${emailNormalized}`}))`,
  )
}

/** Revokes the address's pending (open, unexpired) invitations; answers them. */
export async function revokePendingFor(
  tx: Handle,
  tenantId: string,
  emailNormalized: string,
  now: Date,
): Promise<Invite[]> {
  return tx
    .update(invites)
    .set({ revokedAt: now })
    .where(
      and(
        eq(invites.tenantId, tenantId),
        eq(invites.emailNormalized, emailNormalized),
        open,
        gt(invites.expiresAt, now),
      ),
    )
    .returning()
}

export async function insertInvite(tx: Handle, invite: NewInvite): Promise<Invite> {
  const rows = await tx.insert(invites).values(invite).returning()
  return rows[0]
}

/** Newest first; `after` is the id of the last invitation of the page before. */
export async function listInvites(
  db: Handle,
  tenantId: string,
  options: { limit: number; includeAccepted: boolean; includeRevoked: boolean; after?: string },
): Promise<Invite[]> {
  const { after } = options
  return db
    .select()
    .from(invites)
    .where(
      and(
        eq(invites.tenantId, tenantId),
        options.includeAccepted ? undefined : isNull(invites.acceptedAt),
        options.includeRevoked ? undefined : isNull(invites.revokedAt),
        after
          ? sql`(${invites.createdAt}, ${invites.id}) < (
              SELECT c.created_at, c.id FROM invites c WHERE c.tenant_id = ${tenantId} AND c.id = ${after})`
          : undefined,
      ),
    )
    .orderBy(desc(invites.createdAt), desc(invites.id))
    .limit(options.limit)
}

export function findInvite(db: Handle, tenantId: string, id: string): Promise<Invite | undefined> {
  return findOwned(db, invites, tenantId, id)
}

/** Revokes an open invitation in one statement; undefined when it was not open. */
export async function revokeInvite(db: Handle, tenantId: string, id: string, now: Date) {
  const rows = await db
    .update(invites)
    .set({ revokedAt: now })
    .where(and(eq(invites.tenantId, tenantId), eq(invites.id, id), open))
    .returning()
  return rows[0] as Invite | undefined
}

/**
 * Spends an open, unexpired invitation in one statement. Of parallel accepts, the row lock
 * lets exactly one match; the others wait, then find accepted_at set and match nothing.
 */
export async function spendInvite(tx: Handle, tenantId: string, id: string, now: Date) {
  const rows = await tx
    .update(invites)
    .set({ acceptedAt: now })
    .where(
      and(eq(invites.tenantId, tenantId), eq(invites.id, id), open, gt(invites.expiresAt, now)),
    )
    .returning()
  return rows[0] as Invite | undefined
}

export async function setAcceptedUser(tx: Handle, tenantId: string, id: string, userId: string) {
  await tx
    .update(invites)
    .set({ acceptedUserId: userId })
    .where(and(eq(invites.tenantId, tenantId), eq(invites.id, id)))
}

/** Marks an expired invitation's InviteExpired as recorded; true only the first time. */
export async function markExpiryRecorded(db: Handle, tenantId: string, id: string, now: Date) {
  const rows = await db
    .update(invites)
    .set({ expiredRecordedAt: now })
    .where(
      and(
        eq(invites.tenantId, tenantId),
        eq(invites.id, id),
        isNull(invites.expiredRecordedAt),
        open,
      ),
    )
    .returning({ id: invites.id })
  return rows.length > 0
}
