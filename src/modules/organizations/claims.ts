// What an organization token carries (CONTRACT §18), read by the sessions service at
// refresh (and the provider). Apart from service.ts so that sessions/ depends on this file
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
