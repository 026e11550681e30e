// Which scopes of an API resource a user is granted (CONTRACT §11, API resources; §17,
// Tokens): a scope whose `roles` name the user's base role or one of its custom roles, and
// every scope a custom role's `resourceScopes` lists for that resource. Read live at every
// authorization, consent, token and refresh (oidc/resources.ts, oidc/provider.ts, the
// consent page), so a role given or taken away counts at the next one; and by the
// no-escalation rule (service.ts), for the scopes a caller holds.
import type { Handle } from '../../db/client.ts'
import { findApiResourceByIdentifier } from '../apiresources/indicators.ts'
import { findUserById } from '../users/reads.ts'
import { MEMBER_ROLE } from './permissions.ts'
import * as store from './queries.ts'

/** An API resource as the rule reads it. */
export interface ScopedResource {
  identifier: string
  scopes: { name: string; roles: string[] }[]
}

/** A custom role as the rule reads it. */
export interface HeldRole {
  nameNormalized: string
  resourceScopes: { resource: string; scopes: string[] }[]
}

/**
 * The scopes of `resource` (in its order) granted to a holder of `baseRole` and `held`.
 * Names in a scope's `roles` match ignoring case, as role names are unique ignoring case.
 */
export function scopesGranted(
  resource: ScopedResource,
  baseRole: string,
  held: readonly HeldRole[],
): string[] {
  const names = new Set([baseRole.toLowerCase(), ...held.map((r) => r.nameNormalized)])
  const listed = new Set(
    held.flatMap((r) =>
      r.resourceScopes.filter((e) => e.resource === resource.identifier).flatMap((e) => e.scopes),
    ),
  )
  return resource.scopes
    .filter((s) => listed.has(s.name) || s.roles.some((role) => names.has(role.toLowerCase())))
    .map((s) => s.name)
}

/**
 * The scopes of `resource` (in its order) that organization roles grant (CONTRACT §18): those
 * their `resourceScopes` list. A scope's `roles` never name an organization role, and the
 * base role and tenant roles add nothing to an organization token.
 */
export function organizationScopesGranted(
  resource: ScopedResource,
  held: readonly Pick<HeldRole, 'resourceScopes'>[],
): string[] {
  const listed = new Set(
    held.flatMap((r) =>
      r.resourceScopes.filter((e) => e.resource === resource.identifier).flatMap((e) => e.scopes),
    ),
  )
  return resource.scopes.filter((s) => listed.has(s.name)).map((s) => s.name)
}

/** The scopes of `resource` every user holds: those whose `roles` name Member. */
export const memberScopes = (resource: ScopedResource): string[] =>
  scopesGranted(resource, MEMBER_ROLE, [])

/** The scopes of `resource` the tenant's live user `userId` is granted now (none if no user). */
export async function userResourceScopes(
  db: Handle,
  tenantId: string,
  resource: ScopedResource,
  userId: string,
): Promise<string[]> {
  // One after the other: `db` may be a transaction, which runs one statement at a time.
  const user = await findUserById(db, tenantId, userId)
  if (!user) return []
  return scopesGranted(resource, user.role, await store.userRoleRows(db, tenantId, userId))
}

/** The same by the resource's identifier: none for an unknown resource. */
export async function grantedScopes(
  db: Handle,
  tenantId: string,
  identifier: string,
  userId: string,
): Promise<string[]> {
  const resource = await findApiResourceByIdentifier(db, tenantId, identifier)
  return resource ? userResourceScopes(db, tenantId, resource, userId) : []
}

/**
 * The scopes of the resources `identifiers` a caller holds, as `${identifier} ${scope}`, for
 * the no-escalation rule (service.ts): what the tenant's user `userId` is granted, or, for a
 * caller that is no user (an API key), what every user is granted (the scopes whose `roles`
 * name Member: granting those gives nobody more than any user holds).
 */
export async function callerScopes(
  db: Handle,
  tenantId: string,
  userId: string | undefined,
  identifiers: readonly string[],
): Promise<Set<string>> {
  const user = userId ? await findUserById(db, tenantId, userId) : undefined
  const held = user ? await store.userRoleRows(db, tenantId, user.id) : []
  const out = new Set<string>()
  for (const identifier of new Set(identifiers)) {
    const resource = await findApiResourceByIdentifier(db, tenantId, identifier)
    if (!resource) continue
    for (const scope of scopesGranted(resource, user?.role ?? MEMBER_ROLE, held)) {
      out.add(`${identifier} ${scope}`)
    }
  }
  return out
}
