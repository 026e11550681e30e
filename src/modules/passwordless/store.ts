// The only file of this module that touches the database: the one_time_codes table
// (login codes and email OTPs). Every statement names the tenant, and a code is spent,
// burned or superseded in one atomic UPDATE, never read-then-write.
import { and, eq, gt, inArray, isNull, notInArray, sql } from 'drizzle-orm'
import type { Handle } from '../../db/client.ts'
import { oneTimeCodes, users } from '../../db/schema.ts'
import type { User } from '../users/store.ts'

export type CodePurpose = 'login' | 'mfa'

/** Whose code it is: every statement below is scoped to one (tenant, user, purpose). */
export interface CodeOwner {
  tenantId: string
  userId: string
  purpose: CodePurpose
}

const owned = (o: CodeOwner) =>
  and(
    eq(oneTimeCodes.tenantId, o.tenantId),
    eq(oneTimeCodes.userId, o.userId),
    eq(oneTimeCodes.purpose, o.purpose),
  )

/** Open: neither spent, burned nor superseded, and not expired. */
const open = (o: CodeOwner, now: Date) =>
  and(owned(o), isNull(oneTimeCodes.closedAt), gt(oneTimeCodes.expiresAt, now))

/**
 * Locks the user's row for the rest of the transaction, so two concurrent requests for
 * one address cannot both leave an open code behind. A missing user locks nothing.
 */
export async function lockUser(tx: Handle, tenantId: string, userId: string): Promise<void> {
  await tx
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
    .for('update')
}

/** Closes every open code of the owner ("a new code invalidates the previous one"). */
export async function supersedeCodes(tx: Handle, o: CodeOwner, now: Date): Promise<void> {
  await tx
    .update(oneTimeCodes)
    .set({ closedAt: now, closedReason: 'superseded' })
    .where(and(owned(o), isNull(oneTimeCodes.closedAt)))
}

export async function insertCode(
  tx: Handle,
  o: CodeOwner,
  code: { id: string; codeHash: string; now: Date; expiresAt: Date },
): Promise<void> {
  await tx.insert(oneTimeCodes).values({
    tenantId: o.tenantId,
    id: code.id,
    userId: o.userId,
    purpose: o.purpose,
    codeHash: code.codeHash,
    createdAt: code.now,
    expiresAt: code.expiresAt,
  })
}

/**
 * Counts one wrong guess against the owner's open code when `candidates` (the stored forms
 * of the guess) do not match it; the guess that reaches `maxAttempts` burns the code.
 * One UPDATE per guess: the row lock serialises a parallel burst, and once the code is
 * burned the remaining guesses match no row. Answers the new count, or undefined when
 * no open code was counted (none open, or the guess matches).
 */
export async function countWrongGuess(
  db: Handle,
  o: CodeOwner,
  candidates: string[],
  now: Date,
  maxAttempts: number,
): Promise<{ attempts: number; burned: boolean } | undefined> {
  const burns = sql`${oneTimeCodes.attempts} + 1 >= ${maxAttempts}`
  const rows = await db
    .update(oneTimeCodes)
    .set({
      attempts: sql`${oneTimeCodes.attempts} + 1`,
      closedAt: sql`CASE WHEN ${burns} THEN ${now}::timestamptz ELSE NULL END`,
      closedReason: sql`CASE WHEN ${burns} THEN 'burned' ELSE NULL END`,
    })
    .where(and(open(o, now), notInArray(oneTimeCodes.codeHash, candidates)))
    .returning({ attempts: oneTimeCodes.attempts, closedAt: oneTimeCodes.closedAt })
  const row = rows[0]
  return row ? { attempts: row.attempts, burned: row.closedAt !== null } : undefined
}

/** Whether the owner has an open code matching one of `candidates` (nothing changes). */
export async function hasMatchingCode(
  db: Handle,
  o: CodeOwner,
  candidates: string[],
  now: Date,
): Promise<boolean> {
  const rows = await db
    .select({ id: oneTimeCodes.id })
    .from(oneTimeCodes)
    .where(and(open(o, now), inArray(oneTimeCodes.codeHash, candidates)))
    .limit(1)
  return rows.length > 0
}

/** Spends the owner's open code if it matches: of parallel callers, exactly one wins. */
export async function spendMatchingCode(
  db: Handle,
  o: CodeOwner,
  candidates: string[],
  now: Date,
): Promise<boolean> {
  const rows = await db
    .update(oneTimeCodes)
    .set({ closedAt: now, closedReason: 'spent' })
    .where(and(open(o, now), inArray(oneTimeCodes.codeHash, candidates)))
    .returning({ id: oneTimeCodes.id })
  return rows.length > 0
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
  const rows = await tx
    .update(users)
    .set({ status: 'Active', emailVerified: true, lastLoginAt: now, updatedAt: now })
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
