// The queries of the users table; no other file writes it (test/layout.test.ts checks).
// Every query names the tenant: a user id alone never finds a row.

import type { Db, Handle } from '../../db/client.ts'
import { and, asc, eq, getTableColumns, inArray, isNull, or, sql } from '../../db/orm.ts'
import { isTransaction, namedStatement, perDatabase } from '../../db/prepared.ts'
import { emailConflicts, users } from '../../db/schema.ts'
import { ROLE_PERMISSIONS_SQL } from '../roles/members.ts'
import { ADMIN_ROLE } from '../roles/permissions.ts'
import { RECORD_COLUMNS, recordFromRow, recordJson, type UserRecord } from './record.ts'

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

/**
 * GET /me's read: only the columns the record shows (record.ts), as one raw named statement. Drizzle's
 * select of the whole row and its mapping were a fifth of the route's CPU (issue 10).
 */
const recordById = namedStatement(
  'user_shown_by_id',
  `SELECT ${RECORD_COLUMNS} FROM users WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
)

/**
 * The admin check's read (plugins/auth.ts): the user's state, base role and the tenant
 * permissions its custom roles grant, in one statement, as the user row alone was read
 * before roles existed.
 */
const accessById = namedStatement(
  'user_access_by_id',
  `SELECT id, status, role, ${ROLE_PERMISSIONS_SQL} AS "rolePermissions" FROM users WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
)

export interface UserAccess {
  id: string
  status: string
  role: string
  rolePermissions: string[]
}

export async function findUserAccess(
  db: Db,
  tenantId: string,
  userId: string,
): Promise<UserAccess | undefined> {
  const [row] = await accessById(db, [tenantId, userId])
  return row as unknown as UserAccess | undefined
}

/**
 * GET /me's read: the record and the permissions its custom roles grant, one statement,
 * one JSON column (record.ts, recordJson).
 */
const meById = namedStatement(
  'user_me_by_id',
  `SELECT ${recordJson([
    ['rolePermissions', ROLE_PERMISSIONS_SQL],
    ['passwordBreached', 'password_breached'],
    ['hasPassword', 'password_hash IS NOT NULL'],
  ])} AS me FROM users WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
)

export async function findMeRecord(
  db: Db,
  tenantId: string,
  userId: string,
): Promise<
  | { user: UserRecord; rolePermissions: string[]; passwordBreached: boolean; hasPassword: boolean }
  | undefined
> {
  const [row] = await meById(db, [tenantId, userId])
  if (!row) return undefined
  const me = typeof row.me === 'string' ? JSON.parse(row.me) : row.me
  const { rolePermissions, passwordBreached, hasPassword, ...record } = me as Record<
    string,
    unknown
  >
  return {
    user: recordFromRow(record),
    rolePermissions: rolePermissions as string[],
    passwordBreached: passwordBreached === true,
    hasPassword: hasPassword === true,
  }
}

export async function findUserRecord(
  db: Db,
  tenantId: string,
  userId: string,
): Promise<UserRecord | undefined> {
  const [row] = await recordById(db, [tenantId, userId])
  return row ? recordFromRow(row) : undefined
}

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

const stampLogin = namedStatement(
  'user_stamp_login',
  `UPDATE users SET last_login_at = $3
   WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
   RETURNING *`,
)

/**
 * updateUser's one change on every sign-in, the login time, as a raw named statement: the
 * query builder's UPDATE was planned and built again on each sign-in (issue 10).
 */
export async function stampLastLogin(
  db: Handle,
  tenantId: string,
  userId: string,
  at: Date,
): Promise<User | undefined> {
  const [row] = await stampLogin(db, [tenantId, userId, at])
  return row ? userFromRow(row) : undefined
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
    .where(and(live(tenantId), eq(users.role, ADMIN_ROLE), eq(users.status, 'Active')))
    .orderBy(asc(users.id))
    .for('update')
  return rows.map((r) => r.id)
}

/** Active admins other than `userId`, with every active admin locked (see above). */
export async function countOtherActiveAdmins(db: Handle, tenantId: string, userId: string) {
  return (await lockActiveAdmins(db, tenantId)).filter((id) => id !== userId).length
}

/**
 * Locks the user's row for the rest of the transaction, so two concurrent requests for
 * one address cannot both leave an open code behind. A missing user locks nothing.
 */
export async function lockUserRow(tx: Handle, tenantId: string, userId: string): Promise<void> {
  await tx
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
    .for('update')
}

/**
 * A verified login code signs the user in: a Pending user becomes Active, the address is
 * proven, the login time is stamped. Answers undefined if the user is gone or suspended.
 */
export async function markSignedInByCode(
  tx: Handle,
  tenantId: string,
  userId: string,
  now: Date,
): Promise<User | undefined> {
  return markAddressProven(tx, tenantId, userId, { lastLoginAt: now, updatedAt: now })
}

/**
 * A mailed code reached the address (CONTRACT §9: login code, reset, verification): the
 * address is proven and a Pending user becomes Active, with `changes` (the login time, a
 * new password) in the same statement. Answers undefined if the user is gone or suspended.
 */
export async function markAddressProven(
  tx: Handle,
  tenantId: string,
  userId: string,
  changes: Partial<NewUser> & { updatedAt: Date },
): Promise<User | undefined> {
  const rows = await tx
    .update(users)
    .set({ ...changes, status: 'Active', emailVerified: true })
    .where(
      and(
        eq(users.tenantId, tenantId),
        eq(users.id, userId),
        isNull(users.deletedAt),
        inArray(users.status, ['Active', 'Pending']),
      ),
    )
    .returning()
  return rows[0]
}

// TOTP columns. Accepting a TOTP step is one atomic UPDATE guarded by
// `totp_last_step < step`, so a code replayed (or sent twice in parallel) is accepted once.
const liveUser = (tenantId: string, userId: string) => and(live(tenantId), eq(users.id, userId))

const stepIsNew = (step: number) =>
  or(isNull(users.totpLastStep), sql`${users.totpLastStep} < ${step}`)

/**
 * Stores a new, not yet verified secret (the first half of enrolment). Refused (undefined)
 * while TOTP is active: an active factor is replaced only after an admin reset.
 */
export async function storePendingTotp(
  db: Handle,
  tenantId: string,
  userId: string,
  sealed: string,
  now: Date,
): Promise<User | undefined> {
  const rows = await db
    .update(users)
    .set({ totpSecretEnc: sealed, totpEnabled: false, totpLastStep: null, updatedAt: now })
    .where(and(liveUser(tenantId, userId), eq(users.totpEnabled, false)))
    .returning()
  return rows[0]
}

/**
 * Activates the pending secret `sealed` of an Active user with its first accepted step,
 * applying `changes` in the same statement (a sign-in stamps lastLoginAt). Nothing happens, and undefined is
 * answered, if TOTP is already active, the secret was replaced meanwhile, or the step was
 * already used.
 */
export async function activateTotp(
  db: Handle,
  tenantId: string,
  userId: string,
  sealed: string,
  step: number,
  changes: Partial<NewUser>,
): Promise<User | undefined> {
  const rows = await db
    .update(users)
    .set({ ...changes, totpEnabled: true, totpLastStep: step })
    .where(
      and(
        liveUser(tenantId, userId),
        eq(users.totpEnabled, false),
        eq(users.totpSecretEnc, sealed),
        eq(users.status, 'Active'),
        stepIsNew(step),
      ),
    )
    .returning()
  return rows[0]
}

/** Claims a time step of an active TOTP factor: true exactly once per step and user. */
export async function claimTotpStep(
  db: Handle,
  tenantId: string,
  userId: string,
  step: number,
): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ totpLastStep: step })
    .where(and(liveUser(tenantId, userId), eq(users.totpEnabled, true), stepIsNew(step)))
    .returning({ id: users.id })
  return rows.length > 0
}

/** Marks the address proven (an email OTP reached it); the user, when it was not before. */
export async function markEmailVerified(
  db: Handle,
  tenantId: string,
  userId: string,
  now: Date,
): Promise<User | undefined> {
  const rows = await db
    .update(users)
    .set({ emailVerified: true, updatedAt: now })
    .where(and(liveUser(tenantId, userId), eq(users.emailVerified, false)))
    .returning()
  return rows[0]
}

/**
 * A first password (POST me/password), in one statement that holds only while the account
 * has none: of two racing requests, or a set racing a reset, one writes and the other finds
 * nothing to update.
 */
export async function setFirstPasswordHash(
  db: Handle,
  tenantId: string,
  userId: string,
  passwordHash: string,
  now: Date,
): Promise<User | undefined> {
  const rows = await db
    .update(users)
    .set({ passwordHash, passwordBreached: false, updatedAt: now })
    .where(and(liveUser(tenantId, userId), isNull(users.passwordHash)))
    .returning()
  return rows[0]
}

/**
 * The pages of the users list: live users oldest first, by (created_at, id) (index
 * users_tenant_created), `$2` of them; the next page starts after the user `$3` (a cursor
 * names a row; its sort key is read in the same statement). Raw named statements of the
 * shown columns: Drizzle's mapping of whole rows was the list's largest cost after the
 * database (issue 10).
 */
const firstPage = namedStatement(
  'users_first_page',
  `SELECT ${RECORD_COLUMNS} FROM users WHERE tenant_id = $1 AND deleted_at IS NULL
   ORDER BY created_at, id LIMIT $2`,
)
const nextPage = namedStatement(
  'users_next_page',
  `SELECT ${RECORD_COLUMNS} FROM users WHERE tenant_id = $1 AND deleted_at IS NULL
     AND (created_at, id) > (SELECT c.created_at, c.id FROM users c WHERE c.tenant_id = $1 AND c.id = $3)
   ORDER BY created_at, id LIMIT $2`,
)
// ?locked=true (CONTRACT §21): only the users whose failure lock holds now.
const lockedFirstPage = namedStatement(
  'users_locked_first_page',
  `SELECT ${RECORD_COLUMNS} FROM users WHERE tenant_id = $1 AND deleted_at IS NULL
     AND locked_until > now()
   ORDER BY created_at, id LIMIT $2`,
)
const lockedNextPage = namedStatement(
  'users_locked_next_page',
  `SELECT ${RECORD_COLUMNS} FROM users WHERE tenant_id = $1 AND deleted_at IS NULL
     AND locked_until > now()
     AND (created_at, id) > (SELECT c.created_at, c.id FROM users c WHERE c.tenant_id = $1 AND c.id = $3)
   ORDER BY created_at, id LIMIT $2`,
)

/**
 * A page of the live users, oldest first, after the user `afterId` when given; with
 * `locked`, only those locked now.
 */
export async function listUsers(
  db: Db,
  tenantId: string,
  options: { limit: number; afterId?: string; locked?: boolean },
): Promise<UserRecord[]> {
  const { limit, afterId, locked } = options
  const [first, next] = locked ? [lockedFirstPage, lockedNextPage] : [firstPage, nextPage]
  const rows = afterId
    ? await next(db, [tenantId, limit, afterId])
    : await first(db, [tenantId, limit])
  return rows.map(recordFromRow)
}

/**
 * The sign-in guard refused the account (CONTRACT §21): its lock holds until `until`. Every
 * refused try of a hold tells it, so the row is written only when no lock within a minute of
 * `until` is stored: a burst of refused tries is not a burst of row writes.
 */
export async function storeLockedUntil(db: Handle, tenantId: string, email: string, until: Date) {
  const stale = new Date(until.getTime() - 60_000)
  await db
    .update(users)
    .set({ lockedUntil: until })
    .where(
      and(
        live(tenantId),
        eq(users.emailNormalized, email),
        or(isNull(users.lockedUntil), sql`${users.lockedUntil} < ${stale}`),
      ),
    )
}

// Every successful sign-in runs it (the sign-in guard, CONTRACT §21): a named statement,
// built and planned once, rather than the query builder's UPDATE on each (issue 37).
const clearLockByEmail = namedStatement(
  'user_clear_lock_by_email',
  'UPDATE users SET locked_until = NULL WHERE tenant_id = $1 AND deleted_at IS NULL AND email_normalized = $2 AND locked_until IS NOT NULL',
)

/** A sign-in succeeded: no lock remains (a no-op, without a write, when none was stored). */
export async function clearLockedUntilByEmail(db: Handle, tenantId: string, email: string) {
  await clearLockByEmail(db, [tenantId, email])
}

/** The live user, locked until the commit. */
export async function lockLiveUser(db: Handle, tenantId: string, userId: string) {
  const rows = await db
    .select()
    .from(users)
    .where(and(live(tenantId), eq(users.id, userId)))
    .for('update')
  return rows[0] as User | undefined
}

/** The user whatever its state (soft-deleted too), locked until the commit (erasure). */
export async function lockUserInAnyState(db: Handle, tenantId: string, userId: string) {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
    .for('update')
  return rows[0] as User | undefined
}

/**
 * Removes a user for good, at once (CONTRACT §9, erasure): its sessions, refresh tokens,
 * one-time codes, linked identities, passkeys and recovery codes go with it (ON DELETE
 * CASCADE), and so does the migration's report of an address it shared. Answers whether
 * the row was there.
 */
/** The migration 0002 report's row of the user (it names the address; no foreign key). */
export async function deleteEmailConflictOf(db: Handle, tenantId: string, userId: string) {
  await db
    .delete(emailConflicts)
    .where(and(eq(emailConflicts.tenantId, tenantId), eq(emailConflicts.userId, userId)))
}

export async function hardDeleteUser(db: Handle, tenantId: string, userId: string) {
  await deleteEmailConflictOf(db, tenantId, userId)
  const rows = await db
    .delete(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
    .returning({ id: users.id })
  return rows.length > 0
}

/**
 * A `users` row read by raw SQL (snake_case columns, as a single-statement query of
 * another module returns it), mapped by the schema's own column definitions.
 */
// The users table's columns, listed once: every sign-in and refresh maps a row with them.
const USER_COLUMNS = Object.entries(getTableColumns(users))

export function userFromRow(row: Record<string, unknown>): User {
  const user: Record<string, unknown> = {}
  for (const [key, column] of USER_COLUMNS) {
    const value = row[column.name]
    user[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value)
  }
  return user as User
}

// The import's one INSERT for a whole batch (modules/import), as a raw named statement over
// unnested arrays: the query builder's 1,000-row INSERT (14,000 parameters) took most of a
// batch's time.
const insertImportBatch = namedStatement(
  'users_import_batch',
  `INSERT INTO users
     (tenant_id, id, email, email_normalized, password_hash, status, role, email_verified,
      created_at, updated_at, display_name, given_name, family_name, external_id, locale)
   SELECT $1, u.id, u.email, u.email_normalized, u.password_hash, u.status, u.role,
     u.email_verified, u.created_at, $2, u.display_name, u.given_name, u.family_name,
     u.external_id, u.locale
   FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
     $9::boolean[], $10::timestamptz[], $11::text[], $12::text[], $13::text[], $14::text[],
     $15::text[])
     AS u(id, email, email_normalized, password_hash, status, role, email_verified,
       created_at, display_name, given_name, family_name, external_id, locale)
   ON CONFLICT DO NOTHING
   RETURNING id, email_normalized`,
)

/**
 * Inserts the users of one tenant; a row whose address is taken meanwhile is left out.
 * Answers the ids created, by normalised address.
 */
export async function insertImportedUsers(
  tx: Handle,
  tenantId: string,
  now: Date,
  rows: NewUser[],
): Promise<Map<string, string>> {
  const column = <K extends keyof NewUser>(key: K) => rows.map((r) => r[key] ?? null)
  const created = await insertImportBatch(tx, [
    tenantId,
    now,
    column('id'),
    column('email'),
    column('emailNormalized'),
    column('passwordHash'),
    column('status'),
    column('role'),
    column('emailVerified'),
    column('createdAt'),
    column('displayName'),
    column('givenName'),
    column('familyName'),
    column('externalId'),
    column('locale'),
  ])
  return new Map(created.map((r) => [r.email_normalized as string, r.id as string]))
}

/** The tenant's live users with these addresses, locked until the batch commits. */
export async function findLiveByEmails(
  tx: Handle,
  tenantId: string,
  emails: string[],
): Promise<
  Map<string, { id: string; emailNormalized: string; role: string; totpEnabled: boolean }>
> {
  if (emails.length === 0) return new Map()
  const rows = await tx
    .select({
      id: users.id,
      emailNormalized: users.emailNormalized,
      role: users.role,
      totpEnabled: users.totpEnabled,
    })
    .from(users)
    .where(
      and(
        eq(users.tenantId, tenantId),
        inArray(users.emailNormalized, emails),
        isNull(users.deletedAt),
      ),
    )
    .for('update')
  return new Map(rows.map((r) => [r.emailNormalized, r]))
}

/** onConflict update: the fields an import may change on an existing user. */
export async function updateImportedUser(
  tx: Handle,
  tenantId: string,
  userId: string,
  changes: Pick<
    Partial<NewUser>,
    | 'passwordHash'
    | 'emailVerified'
    | 'displayName'
    | 'givenName'
    | 'familyName'
    | 'externalId'
    | 'locale'
    | 'updatedAt'
  >,
): Promise<void> {
  await tx
    .update(users)
    .set(changes)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
}

/** The live users among `ids` (the policy dry-run's read, CONTRACT §21), in no order. */
export async function findLiveUsersByIds(
  db: Handle,
  tenantId: string,
  ids: string[],
): Promise<User[]> {
  if (ids.length === 0) return []
  return db
    .select()
    .from(users)
    .where(and(live(tenantId), inArray(users.id, ids)))
}
