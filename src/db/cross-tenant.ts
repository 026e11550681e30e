// Queries that cross tenants on purpose, in one file so that tenant isolation can be
// audited in one place: every other query names its tenant. Each is maintenance or a
// lookup whose key is itself global (a token hash).
import { and, eq, isNotNull, sql } from 'drizzle-orm'
import type { Handle } from './client.ts'
import { users } from './schema.ts'

export interface SealedSecretRow {
  tenantId: string
  userId: string
  sealed: string
}

/**
 * Key rotation: the next batch of sealed TOTP secrets after `after`, in key order. This
 * maintenance read spans tenants on purpose; each row is then rewritten by its tenant.
 */
export async function findSealedSecrets(
  db: Handle,
  after: { tenantId: string; userId: string } | undefined,
  limit: number,
): Promise<SealedSecretRow[]> {
  const rows = await db
    .select({ tenantId: users.tenantId, userId: users.id, sealed: users.totpSecretEnc })
    .from(users)
    .where(
      and(
        isNotNull(users.totpSecretEnc),
        after
          ? sql`(${users.tenantId}, ${users.id}) > (${after.tenantId}::uuid, ${after.userId}::uuid)`
          : undefined,
      ),
    )
    .orderBy(users.tenantId, users.id)
    .limit(limit)
  return rows as SealedSecretRow[]
}

/** Replaces one sealed secret if it is still the one read (a concurrent enrolment wins). */
export async function resealSecret(db: Handle, row: SealedSecretRow, sealed: string) {
  const rows = await db
    .update(users)
    .set({ totpSecretEnc: sealed })
    .where(
      and(
        eq(users.tenantId, row.tenantId),
        eq(users.id, row.userId),
        eq(users.totpSecretEnc, row.sealed),
      ),
    )
    .returning({ id: users.id })
  return rows.length > 0
}
