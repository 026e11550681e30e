// JIT membership by verified email domain (CONTRACT §18): a user whose verified address's
// domain an organization of the tenant claims (`jit.emailDomains`) becomes a member with
// `jit.roles` at a sign-in, in the transaction that opens the session (sessions/service.ts
// `start`, the one place every sign-in ends: password, code, passkey, SSO, social, the
// sign-in that ends a verification). Never through an unverified address. One primary-key
// probe of organization_domains a sign-in of a verified user; a member already is left as it
// is (its roles are the admin's to change). The same join, with the same roles, for an SSO
// sign-in through a connection that names the organization (joinThroughConnection). Apart
// from service.ts (which needs Deps) so that sessions/ and federation/ can call it without
// an import cycle.
import type { Handle } from '../../db/client.ts'
import type { AuditEntry } from '../audit/recorder.ts'
import { emailDomain } from '../federation/domains.ts'
import { findRolesByIds } from '../roles/members.ts'
import * as store from './queries.ts'

export async function joinByVerifiedDomain(
  tx: Handle,
  tenantId: string,
  user: { id: string; emailNormalized: string; emailVerified: boolean },
  now: Date,
): Promise<AuditEntry[]> {
  if (!user.emailVerified) return []
  const domain = emailDomain(user.emailNormalized)
  if (!domain) return []
  const organization = await store.organizationOfDomain(tx, tenantId, domain)
  if (!organization) return []
  return join(tx, tenantId, organization, user, now, { via: 'jit' })
}

/**
 * Makes the user a member of `organization` with its `jit.roles`, unless a member already
 * (then nothing: their roles are the admin's to change); the audit row of a new member.
 */
async function join(
  tx: Handle,
  tenantId: string,
  organization: store.Organization,
  user: { id: string; emailNormalized: string },
  now: Date,
  how: { via: 'jit' | 'sso'; connectionId?: string },
): Promise<AuditEntry[]> {
  if (!(await store.insertMember(tx, tenantId, organization.id, user.id, now))) return []
  const roles = (await findRolesByIds(tx, tenantId, organization.jitRoleIds)).filter(
    (r) => r.kind === 'organization',
  )
  await store.replaceMemberRoles(
    tx,
    tenantId,
    organization.id,
    user.id,
    roles.map((r) => r.id),
  )
  return [
    {
      action: 'OrganizationMemberAdded',
      userId: user.id,
      email: user.emailNormalized,
      metadata: { organizationId: organization.id, roles: roles.map((r) => r.name).sort(), ...how },
    },
  ]
}

/**
 * The organization `id` of the tenant, its row held until the transaction ends (a deletion
 * meanwhile waits for it): what an SSO connection may name (federation/service.ts).
 */
export function holdOrganization(tx: Handle, tenantId: string, id: string) {
  return store.holdOrganization(tx, tenantId, id)
}

/**
 * CONTRACT §18: an SSO sign-in through a connection that names an organization makes the
 * user a member of it, with the organization's `jit.roles` (the roles it gives the members
 * who join at a sign-in, here as by domain), in the sign-in's transaction (called from the
 * connection's `accepted`, federation/sso-signin.ts). A member already is left as they are
 * (their roles are the admin's to change). The organization's row is held so that a
 * deletion meanwhile waits (its memberships then go with it); one deleted before joins
 * nobody. OrganizationMemberAdded (`via: "sso"`, the connection named) when one is made.
 */
export async function joinThroughConnection(
  tx: Handle,
  tenantId: string,
  connection: { id: string; organizationId: string | null },
  user: { id: string; emailNormalized: string },
  now: Date,
): Promise<AuditEntry[]> {
  if (!connection.organizationId) return []
  const organization = await store.holdOrganization(tx, tenantId, connection.organizationId)
  if (!organization) return []
  return join(tx, tenantId, organization, user, now, { via: 'sso', connectionId: connection.id })
}
