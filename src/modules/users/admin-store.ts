// The database side of user administration: the paged list, row locks for the last-admin
// rule, and the purge of soft-deleted users.
import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import type { Handle } from '../../db/client.ts'
import { users } from '../../db/schema.ts'
import type { User } from './store.ts'

const live = (tenantId: string) => and(eq(users.tenantId, tenantId), isNull(users.deletedAt))

/**
 * Live users in creation order (index users_tenant_created), `limit` of them after the
 * user `afterId` (a cursor names a row; its sort key is read here, in the same query).
 */
export async function listUsers(
  db: Handle,
  tenantId: string,
  options: { limit: number; afterId?: string },
): Promise<User[]> {
  const { afterId } = options
  const position = afterId
    ? sql`(${users.createdAt}, ${users.id}) > (
        select c.created_at, c.id from users c where c.tenant_id = ${tenantId} and c.id = ${afterId}
      )`
    : undefined
  return db
    .select()
    .from(users)
    .where(and(live(tenantId), position))
    .orderBy(asc(users.createdAt), asc(users.id))
    .limit(options.limit)
}

/** The live user, locked until the commit. */
export async function lockUser(db: Handle, tenantId: string, userId: string) {
  const rows = await db
    .select()
    .from(users)
    .where(and(live(tenantId), eq(users.id, userId)))
    .for('update')
  return rows[0] as User | undefined
}

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
