// An SSO connection's roleMapping (CONTRACT §17): `[{claim, value, roles}]`, applied at
// every SSO sign-in through the connection. A rule matches when the assertion's claim (OIDC)
// or attribute (SAML) equals `value`, or, being a list (`groups`, SAML's multi-valued
// attributes), contains it. The roles that came from a mapping (user_roles source 'sso')
// are replaced by those the current assertion maps to; roles held directly are kept, and a
// mapped role the user already holds directly stays direct. A connection without rules
// leaves the user's roles alone. UserRolesChanged (via "sso") when the user's roles change.
// Roles are kept by id, so a renamed role keeps its rules and a deleted one drops out.
import type { Handle } from '../../db/client.ts'
import type { AuditEntry } from '../audit/recorder.ts'
import { findRolesByIds, replaceSsoRoles, roleNamesOfUsers } from '../roles/members.ts'
import type { User } from '../users/reads.ts'
import type { SsoConnection } from './queries.ts'

export type RoleRule = SsoConnection['roleMapping'][number]

/** Whether the claim's value is `value`, or a list holding it (strings, numbers, booleans). */
export function claimMatches(claim: unknown, value: string): boolean {
  const scalar = (v: unknown) =>
    (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') &&
    String(v) === value
  return Array.isArray(claim) ? claim.some(scalar) : scalar(claim)
}

/** The role ids the rules give for these claims, each once. */
export function mappedRoleIds(rules: readonly RoleRule[], claims: Record<string, unknown>) {
  const ids = new Set<string>()
  for (const rule of rules) {
    const claim = Object.hasOwn(claims, rule.claim) ? claims[rule.claim] : undefined
    if (claimMatches(claim, rule.value)) for (const id of rule.roleIds) ids.add(id)
  }
  return [...ids]
}

export async function applyRoleMapping(
  tx: Handle,
  tenantId: string,
  connection: SsoConnection,
  user: User,
  claims: Record<string, unknown>,
  now: Date,
): Promise<AuditEntry[]> {
  if (connection.roleMapping.length === 0) return []
  const wanted = mappedRoleIds(connection.roleMapping, claims)
  // A role deleted since the rule was written is gone (its id is no role any more).
  const existing = (await findRolesByIds(tx, tenantId, wanted))
    .filter((r) => r.kind === 'tenant')
    .map((r) => r.id)
  const before = (await roleNamesOfUsers(tx, tenantId, [user.id])).get(user.id) ?? []
  await replaceSsoRoles(tx, tenantId, user.id, existing, now)
  const after = (await roleNamesOfUsers(tx, tenantId, [user.id])).get(user.id) ?? []
  const added = after.filter((n) => !before.includes(n)).sort()
  const removed = before.filter((n) => !after.includes(n)).sort()
  if (added.length === 0 && removed.length === 0) return []
  return [
    {
      action: 'UserRolesChanged',
      userId: user.id,
      email: user.emailNormalized,
      metadata: { added, removed, via: 'sso' },
    },
  ]
}
