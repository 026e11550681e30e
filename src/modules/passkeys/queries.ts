// The queries of the passkeys and webauthn_challenges tables; no other file writes them.
// Every query names the tenant: a credential or a challenge of another tenant is never found.
import type { Handle } from '../../db/client.ts'
import { and, desc, eq, gt, inArray, isNull, lt } from '../../db/orm.ts'
import { passkeys, webauthnChallenges } from '../../db/schema.ts'

export type PasskeyRow = typeof passkeys.$inferSelect
/** `reauthentication`: a signed-in user proving a passkey again (CONTRACT §16). */
export type Ceremony = 'registration' | 'authentication' | 'reauthentication'

/** The user's ceremonies in flight (the erasure's: they name the user until they expire). */
export async function deleteChallengesOf(db: Handle, tenantId: string, userId: string) {
  await db
    .delete(webauthnChallenges)
    .where(and(eq(webauthnChallenges.tenantId, tenantId), eq(webauthnChallenges.userId, userId)))
}

export async function insertChallenge(
  db: Handle,
  row: {
    tenantId: string
    challengeHash: string
    ceremony: Ceremony
    userId: string | null
    now: Date
    expiresAt: Date
  },
): Promise<void> {
  await db.insert(webauthnChallenges).values({
    tenantId: row.tenantId,
    challengeHash: row.challengeHash,
    ceremony: row.ceremony,
    userId: row.userId,
    createdAt: row.now,
    expiresAt: row.expiresAt,
  })
}

/**
 * Spends a challenge in one statement (`UPDATE … WHERE used_at IS NULL RETURNING`):
 * unknown, used, expired, other tenants' and the other ceremony's challenges answer
 * undefined, and of two concurrent ceremonies with one challenge only one gets it.
 * Answers the user the challenge was issued for (null: any user).
 */
export async function spendChallenge(
  db: Handle,
  tenantId: string,
  challengeHash: string,
  ceremony: Ceremony,
  now: Date,
): Promise<{ userId: string | null } | undefined> {
  const rows = await db
    .update(webauthnChallenges)
    .set({ usedAt: now })
    .where(
      and(
        eq(webauthnChallenges.tenantId, tenantId),
        eq(webauthnChallenges.challengeHash, challengeHash),
        eq(webauthnChallenges.ceremony, ceremony),
        isNull(webauthnChallenges.usedAt),
        gt(webauthnChallenges.expiresAt, now),
      ),
    )
    .returning({ userId: webauthnChallenges.userId })
  return rows[0]
}

/** Drops a tenant's challenges that expired more than `graceSeconds` ago (they can only fail). */
export async function deleteStaleChallenges(
  db: Handle,
  tenantId: string,
  now: Date,
  graceSeconds: number,
): Promise<void> {
  await db
    .delete(webauthnChallenges)
    .where(
      and(
        eq(webauthnChallenges.tenantId, tenantId),
        lt(webauthnChallenges.expiresAt, new Date(now.getTime() - graceSeconds * 1000)),
      ),
    )
}

/** A user's passkeys, newest first. */
export async function listPasskeys(db: Handle, tenantId: string, userId: string) {
  return db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.tenantId, tenantId), eq(passkeys.userId, userId)))
    .orderBy(desc(passkeys.createdAt), desc(passkeys.id))
}

/** Which of these users hold at least one passkey (the credential guard's second factor). */
export async function usersWithPasskeys(
  db: Handle,
  tenantId: string,
  userIds: string[],
): Promise<Set<string>> {
  if (userIds.length === 0) return new Set()
  const rows = await db
    .selectDistinct({ userId: passkeys.userId })
    .from(passkeys)
    .where(and(eq(passkeys.tenantId, tenantId), inArray(passkeys.userId, userIds)))
  return new Set(rows.map((r) => r.userId))
}

export interface CredentialShape {
  /** The credential id's length in bytes. */
  bytes: number
  transports: string[]
}

/**
 * The id length and transports of the tenant's newest passkey (the decoys of the sign-in
 * options take its shape, CONTRACT §16); undefined when the tenant has none. Ids are
 * UUIDv7, so the newest is the last of the primary key's index: no sort.
 */
export async function newestCredentialShape(
  db: Handle,
  tenantId: string,
): Promise<CredentialShape | undefined> {
  const rows = await db
    .select({ credentialId: passkeys.credentialId, transports: passkeys.transports })
    .from(passkeys)
    .where(eq(passkeys.tenantId, tenantId))
    .orderBy(desc(passkeys.id))
    .limit(1)
  const row = rows[0]
  if (!row) return undefined
  return { bytes: Buffer.from(row.credentialId, 'base64url').length, transports: row.transports }
}

export async function findPasskeyByCredentialId(
  db: Handle,
  tenantId: string,
  credentialId: string,
): Promise<PasskeyRow | undefined> {
  const rows = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.tenantId, tenantId), eq(passkeys.credentialId, credentialId)))
    .limit(1)
  return rows[0]
}

/** Inserts a passkey; undefined when the credential id is already registered in the tenant. */
export async function insertPasskey(
  db: Handle,
  row: typeof passkeys.$inferInsert,
): Promise<PasskeyRow | undefined> {
  const rows = await db.insert(passkeys).values(row).onConflictDoNothing().returning()
  return rows[0]
}

/** Deletes one of the user's passkeys; undefined when the user has none with that id. */
export async function deletePasskey(
  db: Handle,
  tenantId: string,
  userId: string,
  id: string,
): Promise<PasskeyRow | undefined> {
  const rows = await db
    .delete(passkeys)
    .where(and(eq(passkeys.tenantId, tenantId), eq(passkeys.userId, userId), eq(passkeys.id, id)))
    .returning()
  return rows[0]
}

/**
 * Records a sign-in with the passkey: the authenticator's new signature counter, the
 * backup state it reported, the time. Only while the counter still moves forward (or the
 * authenticator keeps none: both zero), in the same statement, so two assertions of a
 * cloned authenticator racing with one counter value cannot both pass (WebAuthn §6.1.1).
 */
export async function recordPasskeyUse(
  db: Handle,
  tenantId: string,
  id: string,
  use: { counter: number; backedUp: boolean; now: Date },
): Promise<PasskeyRow | undefined> {
  const rows = await db
    .update(passkeys)
    .set({ signCount: use.counter, backedUp: use.backedUp, lastUsedAt: use.now })
    .where(
      and(
        eq(passkeys.tenantId, tenantId),
        eq(passkeys.id, id),
        use.counter === 0 ? eq(passkeys.signCount, 0) : lt(passkeys.signCount, use.counter),
      ),
    )
    .returning()
  return rows[0]
}
