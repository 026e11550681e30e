// The only file of the users module that touches the database. Every query names the
// tenant: a user id alone never finds a row.
import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import type { Db, Handle } from '../../db/client.ts'
import { isTransaction, perDatabase } from '../../db/prepared.ts'
import { emailConflicts, users } from '../../db/schema.ts'

export type User = typeof users.$inferSelect
export type NewUser = typeof users.$inferInsert

const live = (tenantId: string) => and(eq(users.tenantId, tenantId), isNull(users.deletedAt))

const tenantParam = sql.placeholder('tenantId')

const byEmail = (db: Handle) =>
  db
    .select()
    .from(users)
    .where(and(live(tenantParam as never), eq(users.emailNormalized, sql.placeholder('email'))))
    .limit(1)

const byId = (db: Handle) =>
  db
    .select()
    .from(users)
    .where(and(live(tenantParam as never), eq(users.id, sql.placeholder('userId'))))
    .limit(1)

const prepared = perDatabase((db: Db) => ({
  byEmail: byEmail(db).prepare('user_by_email'),
  byId: byId(db).prepare('user_by_id'),
}))

export async function findUserByEmail(db: Handle, tenantId: string, emailNormalized: string) {
  const params = { tenantId, email: emailNormalized }
  const rows = isTransaction(db)
    ? await byEmail(db).execute(params)
    : await prepared(db as Db).byEmail.execute(params)
  return rows[0] as User | undefined
}

export async function findUserById(db: Handle, tenantId: string, userId: string) {
  const params = { tenantId, userId }
  const rows = isTransaction(db)
    ? await byId(db).execute(params)
    : await prepared(db as Db).byId.execute(params)
  return rows[0] as User | undefined
}

/**
 * The address's live Pending user (a passwordless JIT sign-up that never finished), locked
 * until the commit; undefined when the address has none or its user is past Pending.
 */
export async function lockPendingUser(db: Handle, tenantId: string, emailNormalized: string) {
  const rows = await db
    .select()
    .from(users)
    .where(
      and(live(tenantId), eq(users.emailNormalized, emailNormalized), eq(users.status, 'Pending')),
    )
    .for('update')
  return rows[0] as User | undefined
}

/** Inserts a user; answers undefined when the address is taken in this tenant. */
export async function insertUser(db: Handle, user: NewUser): Promise<User | undefined> {
  const rows = await db.insert(users).values(user).onConflictDoNothing().returning()
  return rows[0]
}

export async function updateUser(
  db: Handle,
  tenantId: string,
  userId: string,
  changes: Partial<NewUser>,
): Promise<User | undefined> {
  const rows = await db
    .update(users)
    .set(changes)
    .where(and(live(tenantId), eq(users.id, userId)))
    .returning()
  return rows[0]
}

/**
 * Locks the tenant's active admins, always in id order, and answers their ids. Every
 * change that can remove an admin takes these locks first, so two such changes run one
 * after the other (and cannot deadlock), and the second sees what the first did.
 */
export async function lockActiveAdmins(db: Handle, tenantId: string): Promise<string[]> {
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(live(tenantId), eq(users.role, 'Admin'), eq(users.status, 'Active')))
    .orderBy(asc(users.id))
    .for('update')
  return rows.map((r) => r.id)
}

/** Active admins other than `userId`, with every active admin locked (see above). */
export async function countOtherActiveAdmins(db: Handle, tenantId: string, userId: string) {
  return (await lockActiveAdmins(db, tenantId)).filter((id) => id !== userId).length
}

/**
 * Live accounts that migration 0002 found sharing an address once normalised to NFC. A
 * cross-tenant read, for the start-up report only.
 */
export async function countEmailConflicts(db: Db): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(emailConflicts)
  return row?.n ?? 0
}
