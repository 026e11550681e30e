// What the users module calls when an account is deleted (CONTRACT §18: deleting a user
// removes its memberships). Kept apart from service.ts so users/ depends on this file and
// organizations' queries only, never on the organizations service (no import cycle).
import type { Handle } from '../../db/client.ts'
import type { AuditEntry } from '../audit/recorder.ts'
import { deleteMembershipsOf } from './queries.ts'

/**
 * Removes every membership of a user whose account is deleted (the soft delete; the hard
 * delete cascades), inside the deletion's transaction; answers the audit entries.
 */
export async function leaveAllOrganizations(
  tx: Handle,
  tenantId: string,
  user: { id: string; emailNormalized: string },
): Promise<AuditEntry[]> {
  const left = await deleteMembershipsOf(tx, tenantId, user.id)
  return left.map((organizationId) => ({
    action: 'OrganizationMemberRemoved' as const,
    userId: user.id,
    email: user.emailNormalized,
    metadata: { organizationId, via: 'user_deleted' },
  }))
}
