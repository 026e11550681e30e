// The queries of the SSO tables (CONTRACT §12): sso_connections, sso_domains and
// sso_saml_assertions; of the identities table, every outside source's links (§19: the
// SPEC's identity provider's, the SSO and the social connections'), which other modules reach
// through identities.ts; and of oauth_states, which they reach through states.ts. No other
// file writes them but db/cross-tenant.ts (key rotation's scan, the purge's pruning of
// expired assertion ids). Every query names its tenant.
import type { Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, asc, eq, gt, inArray, isNull, lt, notInArray } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import {
  identities,
  oauthStates,
  ssoConnections,
  ssoDomains,
  ssoSamlAssertions,
} from '../../db/schema.ts'

export type SsoConnection = typeof ssoConnections.$inferSelect
export type NewSsoConnection = typeof ssoConnections.$inferInsert
export type Identity = typeof identities.$inferSelect

export async function insertConnection(db: Handle, row: NewSsoConnection) {
  const rows = await db.insert(ssoConnections).values(row).returning()
  return rows[0] as SsoConnection
}

export function findConnection(
  db: Handle,
  tenantId: string,
  id: string,
): Promise<SsoConnection | undefined> {
  return findOwned(db, ssoConnections, tenantId, id)
}

/** Oldest first; `after` is the id of the last connection of the page before. */
export const listConnections = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, ssoConnections, tenantId, page)

export async function updateConnection(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewSsoConnection>,
) {
  const rows = await db
    .update(ssoConnections)
    .set(changes)
    .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.id, id)))
    .returning()
  return rows[0] as SsoConnection | undefined
}

/**
 * Deletes the connection and (by cascade) its domains and assertion ids; its identities are
 * deleted after it in the same transaction (`deleteIdentitiesOf`).
 */
export async function deleteConnection(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .delete(ssoConnections)
    .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.id, id)))
    .returning()
  return rows[0] as SsoConnection | undefined
}

/**
 * Makes `domains` the connection's own. Answers false when one of them belongs to another
 * connection of the tenant (the caller's transaction is then to be abandoned); the primary
 * key (tenant, domain) decides, so two concurrent claims cannot both win.
 */
export async function claimDomains(
  db: Handle,
  tenantId: string,
  connectionId: string,
  domains: string[],
): Promise<boolean> {
  await db
    .delete(ssoDomains)
    .where(
      and(
        eq(ssoDomains.tenantId, tenantId),
        eq(ssoDomains.connectionId, connectionId),
        notInArray(ssoDomains.domain, domains),
      ),
    )
  await db
    .insert(ssoDomains)
    .values(domains.map((domain) => ({ tenantId, domain, connectionId })))
    .onConflictDoNothing()
  const owned = await db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .where(
      and(
        eq(ssoDomains.tenantId, tenantId),
        eq(ssoDomains.connectionId, connectionId),
        inArray(ssoDomains.domain, domains),
      ),
    )
  return owned.length === domains.length
}

/** The connection of the tenant that owns `domain` (lowercase, punycode), if any. */
export async function findConnectionByDomain(db: Handle, tenantId: string, domain: string) {
  const rows = await db
    .select({ connection: ssoConnections })
    .from(ssoDomains)
    .innerJoin(
      ssoConnections,
      and(
        eq(ssoConnections.tenantId, ssoDomains.tenantId),
        eq(ssoConnections.id, ssoDomains.connectionId),
      ),
    )
    .where(and(eq(ssoDomains.tenantId, tenantId), eq(ssoDomains.domain, domain)))
    .limit(1)
  return rows[0]?.connection as SsoConnection | undefined
}

/**
 * Holds the connection's row until the caller's transaction ends (FOR KEY SHARE, the lock
 * a foreign key to it would take): an identity linked through the connection meanwhile is
 * either committed before a deletion of the connection goes on (which then deletes it too)
 * or not linked at all. False when the connection is gone.
 */
/**
 * CONTRACT §18: the tenant's connections that name the organization name none from now
 * (the organization is being deleted, its row locked by the caller, so none can name it
 * meanwhile); answers their ids. The foreign key's SET NULL would do the same, unseen.
 */
export async function detachOrganization(
  db: Handle,
  tenantId: string,
  organizationId: string,
  now: Date,
): Promise<string[]> {
  const rows = await db
    .update(ssoConnections)
    .set({ organizationId: null, updatedAt: now })
    .where(
      and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.organizationId, organizationId)),
    )
    .returning({ id: ssoConnections.id })
  return rows.map((r) => r.id).sort()
}

export async function holdConnection(db: Handle, tenantId: string, id: string): Promise<boolean> {
  const rows = await db
    .select({ id: ssoConnections.id })
    .from(ssoConnections)
    .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.id, id)))
    .for('key share')
  return rows.length > 0
}

/** Who vouches for an identity: the SPEC's identity provider, an SSO or a social connection. */
export type IdentityKind = Identity['kind']

/**
 * An identity's key (CONTRACT §19): its source (the identity provider's issuer, or the
 * connection's id) and its subject there; never the email.
 */
export interface IdentityKey {
  tenantId: string
  kind: IdentityKind
  source: string
  subject: string
}

const keyed = (key: IdentityKey) =>
  and(
    eq(identities.tenantId, key.tenantId),
    eq(identities.kind, key.kind),
    eq(identities.source, key.source),
    eq(identities.subject, key.subject),
  )

export async function findIdentity(db: Handle, key: IdentityKey) {
  const rows = await db.select().from(identities).where(keyed(key)).limit(1)
  return rows[0] as Identity | undefined
}

/**
 * Links an identity to a user; false when it was linked meanwhile (its key is unique, and of
 * two concurrent links only the first gets a row back).
 */
export async function insertIdentity(
  db: Handle,
  row: IdentityKey & { userId: string; email: string | null; createdAt: Date },
): Promise<boolean> {
  const rows = await db
    .insert(identities)
    .values(row)
    .onConflictDoNothing()
    .returning({ id: identities.id })
  return rows.length > 0
}

export async function updateIdentityEmail(db: Handle, key: IdentityKey, email: string | null) {
  await db.update(identities).set({ email }).where(keyed(key))
}

/** The user's identities at every source, oldest first. */
export async function listUserIdentities(db: Handle, tenantId: string, userId: string) {
  return db
    .select({
      id: identities.id,
      kind: identities.kind,
      source: identities.source,
      subject: identities.subject,
      email: identities.email,
      createdAt: identities.createdAt,
    })
    .from(identities)
    .where(and(eq(identities.tenantId, tenantId), eq(identities.userId, userId)))
    .orderBy(asc(identities.createdAt), asc(identities.id))
}

/** Unlinks one identity of the user (`id` a UUID); false when the user has none with that id. */
export async function deleteUserIdentity(
  db: Handle,
  tenantId: string,
  userId: string,
  id: string,
): Promise<boolean> {
  const rows = await db
    .delete(identities)
    .where(
      and(eq(identities.tenantId, tenantId), eq(identities.userId, userId), eq(identities.id, id)),
    )
    .returning({ id: identities.id })
  return rows.length > 0
}

/** Deletes every identity a source vouched for (a deleted connection's). */
export async function deleteIdentitiesOf(
  db: Handle,
  tenantId: string,
  kind: IdentityKind,
  source: string,
) {
  await db
    .delete(identities)
    .where(
      and(
        eq(identities.tenantId, tenantId),
        eq(identities.kind, kind),
        eq(identities.source, source),
      ),
    )
}

/**
 * Records a SAML assertion id as accepted (CONTRACT §12: accepted once), kept until
 * `expiresAt`. True for the first acceptance only: a replay, even a concurrent one, gets
 * false (INSERT … ON CONFLICT DO NOTHING on the primary key).
 */
export async function acceptAssertionOnce(
  db: Handle,
  row: { tenantId: string; connectionId: string; assertionId: string; expiresAt: Date },
): Promise<boolean> {
  const rows = await db
    .insert(ssoSamlAssertions)
    .values(row)
    .onConflictDoNothing()
    .returning({ assertionId: ssoSamlAssertions.assertionId })
  return rows.length > 0
}

/** Whether the tenant has an enabled connection (the sign-in page then offers SSO). */
export async function hasEnabledConnection(db: Handle, tenantId: string): Promise<boolean> {
  const rows = await db
    .select({ id: ssoConnections.id })
    .from(ssoConnections)
    .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.enabled, true)))
    .limit(1)
  return rows.length > 0
}

// oauth_states: the authorization requests in flight and the pending second factors
// (states.ts and pending-mfa.ts). Every query names the tenant: a state of another tenant is
// never found.

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
