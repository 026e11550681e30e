// The queries of the one_time_codes table (login codes, email OTPs and the codes of later
// purposes); no other file writes it. Every statement names the tenant, and a code is
// spent, burned or superseded in one atomic UPDATE, never read-then-write.

import type { Handle } from '../../db/client.ts'
import { and, eq, gt, inArray, isNull, notInArray, sql } from '../../db/orm.ts'
import { oneTimeCodes } from '../../db/schema.ts'

export type CodePurpose = 'login' | 'mfa' | 'reset' | 'verify'

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
  code: { id: string; codeHash: string; now: Date; expiresAt: Date; delivery?: 'link' },
): Promise<void> {
  await tx.insert(oneTimeCodes).values({
    tenantId: o.tenantId,
    id: code.id,
    userId: o.userId,
    purpose: o.purpose,
    codeHash: code.codeHash,
    delivery: code.delivery ?? null,
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

/**
 * The owner's open code matching one of `candidates`, with how it was delivered, or
 * undefined (nothing changes).
 */
export async function findMatchingCode(
  db: Handle,
  o: CodeOwner,
  candidates: string[],
  now: Date,
): Promise<{ delivery: string | null } | undefined> {
  const rows = await db
    .select({ delivery: oneTimeCodes.delivery })
    .from(oneTimeCodes)
    .where(and(open(o, now), inArray(oneTimeCodes.codeHash, candidates)))
    .limit(1)
  return rows[0]
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
