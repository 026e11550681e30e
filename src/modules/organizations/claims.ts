// What an organization token carries (CONTRACT §18), read by the sessions service at
// refresh and by the OpenID provider (its `organizations` scope and organization tokens). Apart from service.ts so that sessions/ depends on this file
// and organizations' queries only (service.ts needs Deps, which holds the sessions service).
import type { Handle } from '../../db/client.ts'
import { AppError } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import type { Role } from '../roles/members.ts'
import * as store from './queries.ts'

/**
 * What an organization token of the user carries (CONTRACT §18): the organization's id,
 * the roles held there, and whether it needs a second factor; 403 not_a_member for a user
 * who is not a live member (of this organization of this tenant).
 */
export async function organizationClaims(
  db: Handle,
  tenantId: string,
  organizationId: string,
  userId: string,
): Promise<{ orgId: string; orgRoles: string[]; mfaRequired: boolean; roles: Role[] }> {
  const notMember = () =>
    new AppError('not_a_member', { message: 'The user is not a member of this organization.' })
  if (!isUuid(organizationId)) throw notMember()
  const organization = await store.findOrganization(db, tenantId, organizationId)
  if (!organization) throw notMember()
  const member = await store.findMember(db, tenantId, organizationId, userId)
  if (!member) throw notMember()
  const roles = await store.memberRoleRows(db, tenantId, organizationId, userId)
  return {
    orgId: organizationId,
    orgRoles: roles.map((r) => r.name),
    mfaRequired: organization.mfaRequired,
    roles,
  }
}

/**
 * The claims of the OpenID scope `organizations` (CONTRACT §18): the ids of the user's
 * organizations in this tenant and the roles held in each, as `"{orgId}:{role}"`. Read
 * live (one statement), so a membership added or removed shows at the next ID token or
 * userinfo request.
 */
export async function membershipClaims(
  db: Handle,
  tenantId: string,
  userId: string,
): Promise<{ organizations: string[]; organization_roles: string[] }> {
  const memberships = await store.membershipsOf(db, tenantId, userId)
  return {
    organizations: memberships.map((m) => m.id),
    organization_roles: memberships.flatMap((m) => m.roles.map((role) => `${m.id}:${role}`)),
  }
}

/** The organization roles the user holds in any organization of the tenant, each once. */
export const heldOrganizationRoles = store.heldOrganizationRoleRows
