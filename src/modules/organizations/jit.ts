// JIT membership by verified email domain (CONTRACT §18): a user whose verified address's
// domain an organization of the tenant claims (`jit.emailDomains`) becomes a member with
// `jit.roles` at a sign-in, in the transaction that opens the session (sessions/service.ts
// `start`, the one place every sign-in ends: password, code, passkey, SSO, social, the
// sign-in that ends a verification). Never through an unverified address. One primary-key
// probe of organization_domains a sign-in of a verified user; a member already is left as it
// is (its roles are the admin's to change). Apart from service.ts (which needs Deps) so that
// sessions/ can call it without an import cycle.
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
      metadata: {
        organizationId: organization.id,
        roles: roles.map((r) => r.name).sort(),
        via: 'jit',
      },
    },
  ]
}
