// The queries of the SSO tables (CONTRACT §12): sso_connections, sso_domains,
// sso_identities and sso_saml_assertions. No other file writes them but db/cross-tenant.ts
// (key rotation's scan, the purge's pruning of expired assertion ids). Every query names
// its tenant.
import type { Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, eq, inArray, notInArray } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { ssoConnections, ssoDomains, ssoIdentities, ssoSamlAssertions } from '../../db/schema.ts'

export type SsoConnection = typeof ssoConnections.$inferSelect
export type NewSsoConnection = typeof ssoConnections.$inferInsert
export type SsoIdentity = typeof ssoIdentities.$inferSelect

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

/** Deletes the connection and (by cascade) its domains, identities and assertion ids. */
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

export async function findSsoIdentity(
  db: Handle,
  tenantId: string,
  connectionId: string,
  subject: string,
) {
  const rows = await db
    .select()
    .from(ssoIdentities)
    .where(
      and(
        eq(ssoIdentities.tenantId, tenantId),
        eq(ssoIdentities.connectionId, connectionId),
        eq(ssoIdentities.subject, subject),
      ),
    )
    .limit(1)
  return rows[0] as SsoIdentity | undefined
}

/** Links an identity; false when a concurrent sign-in linked it first. */
export async function insertSsoIdentity(db: Handle, row: SsoIdentity): Promise<boolean> {
  const rows = await db
    .insert(ssoIdentities)
    .values(row)
    .onConflictDoNothing()
    .returning({ subject: ssoIdentities.subject })
  return rows.length > 0
}

export async function updateSsoIdentityEmail(
  db: Handle,
  identity: Pick<SsoIdentity, 'tenantId' | 'connectionId' | 'subject'>,
  email: string | null,
) {
  await db
    .update(ssoIdentities)
    .set({ email })
    .where(
      and(
        eq(ssoIdentities.tenantId, identity.tenantId),
        eq(ssoIdentities.connectionId, identity.connectionId),
        eq(ssoIdentities.subject, identity.subject),
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
