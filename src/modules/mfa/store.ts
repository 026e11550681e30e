// The only file of the mfa module that touches the database: the TOTP columns of users.
// Accepting a TOTP step is one atomic UPDATE guarded by `totp_last_step < step`, so a
// code replayed (or sent twice in parallel) is accepted once.
import { and, eq, isNotNull, isNull, or, sql } from 'drizzle-orm'
import type { Handle } from '../../db/client.ts'
import { users } from '../../db/schema.ts'
import type { NewUser, User } from '../users/store.ts'

const live = (tenantId: string, userId: string) =>
  and(eq(users.tenantId, tenantId), eq(users.id, userId), isNull(users.deletedAt))

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
    .where(and(live(tenantId, userId), eq(users.totpEnabled, false)))
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
        live(tenantId, userId),
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
    .where(and(live(tenantId, userId), eq(users.totpEnabled, true), stepIsNew(step)))
    .returning({ id: users.id })
  return rows.length > 0
}

/** Marks the address proven (an email OTP reached it); true when it was not before. */
export async function markEmailVerified(
  db: Handle,
  tenantId: string,
  userId: string,
  now: Date,
): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ emailVerified: true, updatedAt: now })
    .where(and(live(tenantId, userId), eq(users.emailVerified, false)))
    .returning({ id: users.id })
  return rows.length > 0
}

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
