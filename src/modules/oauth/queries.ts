// The queries of the oauth_states table; no other file writes it. Every query names the
// tenant: a state of another tenant is never found. (The identities it leads to are
// federation/queries.ts's, CONTRACT §19.)

import type { Handle } from '../../db/client.ts'
import { and, eq, gt, isNull, lt } from '../../db/orm.ts'
import { oauthStates } from '../../db/schema.ts'

export async function insertState(
  db: Handle,
  row: {
    tenantId: string
    stateHash: string
    codeVerifier: string
    nonce: string
    now: Date
    /** The SSO connection (CONTRACT §12) the state is for; none for the SPEC's idp. */
    connectionId?: string
  },
  ttlSeconds: number,
): Promise<void> {
  await db.insert(oauthStates).values({
    tenantId: row.tenantId,
    connectionId: row.connectionId ?? null,
    stateHash: row.stateHash,
    codeVerifier: row.codeVerifier,
    nonce: row.nonce,
    createdAt: row.now,
    expiresAt: new Date(row.now.getTime() + ttlSeconds * 1000),
  })
}

/**
 * Spends a state in one statement: unknown, used, expired and other tenants' states all
 * answer undefined, and of two concurrent callbacks with one state only one gets it. A
 * state is spent only where it was made for: the SPEC's idp callback (no `connectionId`) or
 * that SSO connection's.
 */
export async function spendState(
  db: Handle,
  tenantId: string,
  stateHash: string,
  now: Date,
  connectionId: string | null = null,
) {
  const rows = await db
    .update(oauthStates)
    .set({ usedAt: now })
    .where(
      and(
        eq(oauthStates.tenantId, tenantId),
        eq(oauthStates.stateHash, stateHash),
        connectionId === null
          ? isNull(oauthStates.connectionId)
          : eq(oauthStates.connectionId, connectionId),
        isNull(oauthStates.usedAt),
        gt(oauthStates.expiresAt, now),
      ),
    )
    .returning({ codeVerifier: oauthStates.codeVerifier, nonce: oauthStates.nonce })
  return rows[0]
}

/**
 * A state that is neither used nor expired, read without spending it (the pending second
 * factor of a federated sign-in, federation/pending-mfa.ts, is read at each try and spent
 * only by the one that succeeds).
 */
export async function findLiveState(db: Handle, tenantId: string, stateHash: string, now: Date) {
  const rows = await db
    .select({
      codeVerifier: oauthStates.codeVerifier,
      nonce: oauthStates.nonce,
      connectionId: oauthStates.connectionId,
    })
    .from(oauthStates)
    .where(
      and(
        eq(oauthStates.tenantId, tenantId),
        eq(oauthStates.stateHash, stateHash),
        isNull(oauthStates.usedAt),
        gt(oauthStates.expiresAt, now),
      ),
    )
    .limit(1)
  return rows[0]
}

/** Drops a tenant's states that expired more than `graceSeconds` ago (they can only fail). */
export async function deleteStaleStates(
  db: Handle,
  tenantId: string,
  now: Date,
  graceSeconds: number,
) {
  await db
    .delete(oauthStates)
    .where(
      and(
        eq(oauthStates.tenantId, tenantId),
        lt(oauthStates.expiresAt, new Date(now.getTime() - graceSeconds * 1000)),
      ),
    )
}
