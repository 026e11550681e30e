// Custom roles given on the way in (CONTRACT §17): an invitation's `roles`, applied when it
// is accepted, and an import row's. Both pass the no-escalation rule first (invites/service.ts,
// import/service.ts); an unknown name is refused up front.
import type { Handle } from '../../db/client.ts'
import type { AuditEntry } from '../audit/recorder.ts'
import * as store from './queries.ts'

/**
 * The tenant roles named (any case) by their stored names, sorted, each once; or the index
 * of the first name that is no tenant role of the tenant (unknown, or an organization's).
 */
export async function resolveRoleNames(
  db: Handle,
  tenantId: string,
  names: readonly string[],
): Promise<{ roles: store.Role[] } | { unknown: number }> {
  const found = await store.findRolesByName(db, tenantId, [...names])
  const byName = new Map(found.filter((r) => r.kind === 'tenant').map((r) => [r.nameNormalized, r]))
  const unknown = names.findIndex((name) => !byName.has(name.toLowerCase()))
  if (unknown >= 0) return { unknown }
  const roles = [...byName.values()].sort((a, b) =>
    a.nameNormalized < b.nameNormalized ? -1 : a.nameNormalized > b.nameNormalized ? 1 : 0,
  )
  return { roles }
}

/**
 * Gives a user the roles named that still exist (a role deleted or renamed since is
 * skipped), adding to those it holds; answers the UserRolesChanged entry, or none when
 * nothing was added.
 */
export async function grantRoles(
  tx: Handle,
  tenantId: string,
  user: { id: string; emailNormalized: string },
  names: readonly string[],
  via: 'invite' | 'import',
  now: Date,
): Promise<AuditEntry[]> {
  if (names.length === 0) return []
  const found = (await store.findRolesByName(tx, tenantId, [...names])).filter(
    (r) => r.kind === 'tenant',
  )
  const gained = new Set(
    await store.addUserRoles(
      tx,
      tenantId,
      user.id,
      found.map((r) => r.id),
      now,
    ),
  )
  const added = found
    .filter((r) => gained.has(r.id))
    .map((r) => r.name)
    .sort()
  if (added.length === 0) return []
  return [
    {
      action: 'UserRolesChanged',
      userId: user.id,
      email: user.emailNormalized,
      metadata: { added, removed: [], via },
    },
  ]
}
