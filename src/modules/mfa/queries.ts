// The queries of the recovery_codes table (CONTRACT §9); no other file writes it. Every
// statement names the tenant and the user, and a code is spent in one atomic UPDATE
// (`WHERE used_at IS NULL`), never read-then-write.
import type { Handle } from '../../db/client.ts'
import { and, eq, inArray, isNull, sql } from '../../db/orm.ts'
import { recoveryCodes } from '../../db/schema.ts'

const owned = (tenantId: string, userId: string) =>
  and(eq(recoveryCodes.tenantId, tenantId), eq(recoveryCodes.userId, userId))

/** Removes every code of the user, spent or not (new codes, or TOTP removed). */
export async function deleteRecoveryCodes(
  tx: Handle,
  tenantId: string,
  userId: string,
): Promise<void> {
  await tx.delete(recoveryCodes).where(owned(tenantId, userId))
}

export async function insertRecoveryCodes(
  tx: Handle,
  tenantId: string,
  userId: string,
  hashes: string[],
  now: Date,
): Promise<void> {
  await tx
    .insert(recoveryCodes)
    .values(hashes.map((codeHash) => ({ tenantId, userId, codeHash, createdAt: now })))
}

/** Whether one of `candidates` (the stored forms of one code) is an unspent code. */
export async function hasUnspentCode(
  db: Handle,
  tenantId: string,
  userId: string,
  candidates: string[],
): Promise<boolean> {
  const rows = await db
    .select({ one: sql<number>`1` })
    .from(recoveryCodes)
    .where(
      and(
        owned(tenantId, userId),
        inArray(recoveryCodes.codeHash, candidates),
        isNull(recoveryCodes.usedAt),
      ),
    )
    .limit(1)
  return rows.length > 0
}

/**
 * Spends the unspent code among `candidates`, in one statement that also counts the codes
 * left. Of any number of parallel callers with one code, the row lock lets exactly one
 * UPDATE match; the others get undefined. (The count reads the snapshot from before the
 * UPDATE, as every part of one statement does, hence the subtraction.)
 */
export async function spendRecoveryCode(
  tx: Handle,
  tenantId: string,
  userId: string,
  candidates: string[],
  now: Date,
): Promise<{ remaining: number } | undefined> {
  const result = (await tx.execute(sql`
    WITH spent AS (
      UPDATE recovery_codes SET used_at = ${now}
      WHERE tenant_id = ${tenantId} AND user_id = ${userId}
        AND code_hash IN (${sql.join(
          candidates.map((c) => sql`${c}`),
          sql`, `,
        )})
        AND used_at IS NULL
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM spent)::int AS spent,
           (SELECT count(*) FROM recovery_codes
             WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND used_at IS NULL)::int AS open
  `)) as unknown as { rows: { spent: number; open: number }[] }
  const row = result.rows[0]
  if (!row || Number(row.spent) === 0) return undefined
  return { remaining: Number(row.open) - Number(row.spent) }
}

/** How many unspent codes the user has. */
export async function countUnspentCodes(
  db: Handle,
  tenantId: string,
  userId: string,
): Promise<number> {
  const rows = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(recoveryCodes)
    .where(and(owned(tenantId, userId), isNull(recoveryCodes.usedAt)))
  return Number(rows[0]?.n ?? 0)
}
