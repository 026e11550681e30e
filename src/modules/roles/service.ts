// Custom roles and their assignment (CONTRACT §17). The built-ins (Admin, Member) are
// listed beside the tenant's own and cannot change (403 builtin_role). Every change is
// audited in its transaction. No escalation: a caller grants, takes away, creates or edits
// only roles whose every permission and resource scope it holds itself; a caller holding
// every permission (an Admin, an API key) may do any.

import type { Handle } from '../../db/client.ts'
import { databaseFailure } from '../../db/errors.ts'
import type { Deps } from '../../deps.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { PageQuery } from '../../schemas.ts'
import { findApiResourceByIdentifier } from '../apiresources/indicators.ts'
import { type ApiResource, listApiResources, renameScopeRole } from '../apiresources/scope-roles.ts'
import type { Actor } from '../audit/recorder.ts'
import { lockLiveUser } from '../users/reads.ts'
import {
  ALL_PERMISSIONS,
  BUILT_IN_ROLES,
  holdsAll,
  isAdminRole,
  isBuiltInRoleName,
  isPermission,
  type Permission,
} from './permissions.ts'
import * as store from './queries.ts'
import { callerScopes, memberScopes } from './resource-scopes.ts'
import type { CreateRoleBody, PatchRoleBody, RoleRecord, UserRolesBody } from './schemas.ts'

type RoleDeps = Pick<Deps, 'audit' | 'clock' | 'db'>

/** At most this many custom roles a tenant (built-ins not counted). */
export const ROLE_LIMIT = 100

/** Who asks: its effective permissions, and its user id when it is a user. */
export interface Caller {
  actor: Actor
  permissions: readonly Permission[]
}

type ResourceScopes = { resource: string; scopes: string[] }[]

export function presentRole(row: store.Role): RoleRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    kind: row.kind as RoleRecord['kind'],
    permissions: [...row.permissions].sort() as Permission[],
    resourceScopes: row.resourceScopes,
    builtIn: false,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

function presentBuiltIn(
  role: (typeof BUILT_IN_ROLES)[number],
  resources: readonly ApiResource[],
): RoleRecord {
  return {
    id: role.name,
    name: role.name,
    description: null,
    kind: 'tenant',
    permissions: [...role.permissions].sort(),
    resourceScopes: builtInScopes(role.name, resources),
    builtIn: true,
    createdAt: null,
    updatedAt: null,
  }
}

/**
 * CONTRACT §17: Admin lists every resource scope (it holds them all for no escalation),
 * Member the scopes whose §11 `roles` name Member (every user is granted those). Which
 * scopes a token carries is the scopes' `roles` (resource-scopes.ts).
 */
function builtInScopes(name: string, resources: readonly ApiResource[]): ResourceScopes {
  return resources
    .map((r) => ({
      resource: r.identifier,
      scopes: (isAdminRole(name) ? r.scopes.map((s) => s.name) : memberScopes(r)).sort(),
    }))
    .filter((entry) => entry.scopes.length > 0)
}

/** Every API resource of the tenant, oldest first (read 200 at a time). */
async function allApiResources(db: Handle, tenantId: string): Promise<ApiResource[]> {
  const all: ApiResource[] = []
  for (;;) {
    const page = await listApiResources(db, tenantId, { limit: 200, after: all.at(-1)?.id })
    all.push(...page)
    if (page.length < 200) return all
  }
}

const builtInById = (id: string) => BUILT_IN_ROLES.find((role) => role.name === id)

const invalid = (path: string, message: string): never => {
  throw new AppError('validation', { details: { issues: [{ path, message }] } })
}

function checkName(name: string) {
  if (isBuiltInRoleName(name)) invalid('body.name', `${name} is a built-in role's name`)
}

function checkPermissions(kind: string, permissions: string[] | undefined): Permission[] {
  if (permissions === undefined) return []
  if (kind === 'organization' && permissions.length > 0) {
    invalid('body.permissions', 'an organization role has no tenant permissions')
  }
  for (const [i, name] of permissions.entries()) {
    if (!isPermission(name)) invalid(`body.permissions.${i}`, `unknown permission ${name}`)
  }
  return [...new Set(permissions)].sort() as Permission[]
}

async function checkResourceScopes(
  db: Handle,
  tenantId: string,
  resourceScopes: ResourceScopes | undefined,
): Promise<ResourceScopes> {
  if (resourceScopes === undefined) return []
  const merged = new Map<string, Set<string>>()
  for (const [i, entry] of resourceScopes.entries()) {
    const resource = await findApiResourceByIdentifier(db, tenantId, entry.resource)
    if (!resource)
      invalid(`body.resourceScopes.${i}.resource`, `unknown resource ${entry.resource}`)
    const known = new Set(resource?.scopes.map((s) => s.name))
    for (const [j, scope] of entry.scopes.entries()) {
      if (!known.has(scope)) {
        invalid(
          `body.resourceScopes.${i}.scopes.${j}`,
          `unknown scope ${scope} of ${entry.resource}`,
        )
      }
    }
    const set = merged.get(entry.resource) ?? new Set()
    for (const scope of entry.scopes) set.add(scope)
    merged.set(entry.resource, set)
  }
  return [...merged].map(([resource, scopes]) => ({ resource, scopes: [...scopes].sort() }))
}

const holdsEvery = (caller: Caller) => holdsAll(caller.permissions, ALL_PERMISSIONS)

/**
 * 403 permission_required unless the caller holds every permission and resource scope of
 * `wanted` (or every permission there is).
 */
export async function refuseEscalation(
  db: Handle,
  tenantId: string,
  caller: Caller,
  wanted: { permissions: readonly string[]; resourceScopes: ResourceScopes }[],
) {
  if (holdsEvery(caller)) return
  for (const role of wanted) {
    const missing = role.permissions.find((p) => !caller.permissions.includes(p as Permission))
    if (missing) fail('permission_required', { details: { permission: missing } })
  }
  const scopes = wanted.flatMap((r) => r.resourceScopes)
  if (scopes.length === 0) return
  // What the caller is granted: by its custom roles' resourceScopes, and by the scopes'
  // `roles` naming its base role (Member's scopes count for any caller) or its custom roles.
  const userId = caller.actor.type === 'user' ? (caller.actor.id ?? undefined) : undefined
  const held = await callerScopes(
    db,
    tenantId,
    userId,
    scopes.map((e) => e.resource),
  )
  for (const entry of scopes) {
    for (const scope of entry.scopes) {
      if (!held.has(`${entry.resource} ${scope}`)) {
        fail('permission_required', {
          message: `The caller does not hold the scope ${scope} of ${entry.resource}.`,
          details: { resource: entry.resource, scope },
        })
      }
    }
  }
}

const isUniqueViolation = (error: unknown) => databaseFailure(error)?.code === '23505'

/**
 * GET roles, paged like every list (CONTRACT §2, §17): the custom roles oldest first,
 * `limit` a page, the cursor naming a page's last custom role; the first page (no cursor)
 * also carries the two built-ins ahead of its custom roles, so a cursor always names a
 * row and every role is read once by following nextCursor.
 */
export async function listRolePage(deps: Pick<Deps, 'db'>, tenantId: string, query: PageQuery) {
  const page = await readPage(
    query,
    ({ limit, after }) => store.listRoles(deps.db, tenantId, { limit, after }),
    presentRole,
  )
  if (query.cursor !== undefined) return page
  const resources = await allApiResources(deps.db, tenantId)
  const builtIns = BUILT_IN_ROLES.map((role) => presentBuiltIn(role, resources))
  return { ...page, items: [...builtIns, ...page.items] }
}

export async function getRole(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  const builtIn = builtInById(id)
  if (builtIn) return { role: presentBuiltIn(builtIn, await allApiResources(deps.db, tenantId)) }
  if (!isUuid(id)) fail('not_found')
  const row = await store.findRole(deps.db, tenantId, id)
  if (!row) fail('not_found')
  return { role: presentRole(row) }
}

export async function createRole(
  deps: RoleDeps,
  tenantId: string,
  input: CreateRoleBody,
  caller: Caller,
) {
  checkName(input.name)
  const kind = input.kind ?? 'tenant'
  const permissions = checkPermissions(kind, input.permissions)
  const now = deps.clock.now()
  try {
    const row = await deps.db.transaction(async (tx) => {
      const resourceScopes = await checkResourceScopes(tx, tenantId, input.resourceScopes)
      await refuseEscalation(tx, tenantId, caller, [{ permissions, resourceScopes }])
      await store.lockTenantRoles(tx, tenantId)
      if ((await store.countRoles(tx, tenantId)) >= ROLE_LIMIT) {
        fail('limit_exceeded', {
          message: `A workspace has at most ${ROLE_LIMIT} custom roles.`,
          details: { limit: ROLE_LIMIT },
        })
      }
      const created = await store.insertRole(tx, {
        tenantId,
        id: uuidv7(now.getTime()),
        name: input.name,
        nameNormalized: input.name.toLowerCase(),
        description: input.description ?? null,
        kind,
        permissions,
        resourceScopes,
        createdAt: now,
        updatedAt: now,
      })
      if (!created) fail('name_taken')
      await deps.audit.record(tx, tenantId, caller.actor, [
        {
          action: 'RoleCreated',
          metadata: { roleId: created.id, name: created.name, kind, permissions, resourceScopes },
        },
      ])
      return created
    })
    return { role: presentRole(row) }
  } catch (error) {
    if (isUniqueViolation(error)) fail('name_taken')
    throw error
  }
}

export async function updateRole(
  deps: RoleDeps,
  tenantId: string,
  id: string,
  input: PatchRoleBody,
  caller: Caller,
) {
  if (builtInById(id)) fail('builtin_role')
  if (!isUuid(id)) fail('not_found')
  if (input.name !== undefined) checkName(input.name)
  const now = deps.clock.now()
  try {
    const row = await deps.db.transaction(async (tx) => {
      await store.lockTenantRoles(tx, tenantId)
      const before = await store.findRole(tx, tenantId, id)
      if (!before) fail('not_found')
      const permissions =
        input.permissions === undefined
          ? undefined
          : checkPermissions(before.kind, input.permissions)
      const resourceScopes =
        input.resourceScopes === undefined
          ? undefined
          : await checkResourceScopes(tx, tenantId, input.resourceScopes)
      // The role before and after: editing may neither widen nor narrow past the editor.
      await refuseEscalation(tx, tenantId, caller, [
        before,
        {
          permissions: permissions ?? before.permissions,
          resourceScopes: resourceScopes ?? before.resourceScopes,
        },
      ])
      const changes = {
        ...(input.name === undefined
          ? {}
          : { name: input.name, nameNormalized: input.name.toLowerCase() }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(permissions === undefined ? {} : { permissions }),
        ...(resourceScopes === undefined ? {} : { resourceScopes }),
      }
      const fields = Object.keys(changes).filter((k) => k !== 'nameNormalized')
      if (fields.length === 0) return before
      const after = await store.updateRole(tx, tenantId, id, { ...changes, updatedAt: now })
      if (!after) fail('not_found')
      // API resource scopes name roles by name (CONTRACT §17): they follow a rename.
      if (after.name !== before.name) {
        await renameScopeRole(tx, tenantId, before.nameNormalized, after.name)
      }
      await deps.audit.record(tx, tenantId, caller.actor, [
        { action: 'RoleUpdated', metadata: { roleId: id, name: after.name, fields } },
      ])
      return after
    })
    return { role: presentRole(row) }
  } catch (error) {
    if (isUniqueViolation(error)) fail('name_taken')
    throw error
  }
}

export async function deleteRole(deps: RoleDeps, tenantId: string, id: string, caller: Caller) {
  if (builtInById(id)) fail('builtin_role')
  if (!isUuid(id)) fail('not_found')
  await deps.db.transaction(async (tx) => {
    await store.lockTenantRoles(tx, tenantId)
    const before = await store.findRole(tx, tenantId, id)
    if (!before) fail('not_found')
    // Deleting takes the role from its holders: the same rule as taking it away.
    await refuseEscalation(tx, tenantId, caller, [before])
    await store.deleteRole(tx, tenantId, id)
    await renameScopeRole(tx, tenantId, before.nameNormalized, null)
    await deps.audit.record(tx, tenantId, caller.actor, [
      { action: 'RoleDeleted', metadata: { roleId: id, name: before.name } },
    ])
  })
}

/** PUT users/{id}/roles: sets the user's direct custom roles, by name. */
export async function setUserRoles(
  deps: RoleDeps,
  tenantId: string,
  userId: string,
  input: UserRolesBody,
  caller: Caller,
) {
  const now = deps.clock.now()
  await deps.db.transaction(async (tx) => {
    await store.lockTenantRoles(tx, tenantId)
    const user = await lockLiveUser(tx, tenantId, userId)
    if (!user) fail('not_found')
    const found = await store.findRolesByName(tx, tenantId, input.roles)
    const byName = new Map(found.map((r) => [r.nameNormalized, r]))
    for (const [i, name] of input.roles.entries()) {
      const role = byName.get(name.toLowerCase())
      if (!role) invalid(`body.roles.${i}`, `unknown role ${name}`)
      else if (role.kind !== 'tenant') invalid(`body.roles.${i}`, `${name} is an organization role`)
    }
    const wanted = [...byName.values()]
    const before = await store.directRoleRows(tx, tenantId, userId)
    const added = wanted.filter((r) => !before.some((b) => b.id === r.id))
    const removed = before.filter((b) => !wanted.some((r) => r.id === b.id))
    await refuseEscalation(tx, tenantId, caller, [...added, ...removed])
    if (added.length > 0 || removed.length > 0) {
      await store.replaceUserRoles(
        tx,
        tenantId,
        userId,
        wanted.map((r) => r.id),
        now,
      )
      await deps.audit.record(tx, tenantId, caller.actor, [
        {
          action: 'UserRolesChanged',
          userId,
          email: user.emailNormalized,
          metadata: {
            added: added.map((r) => r.name).sort(),
            removed: removed.map((r) => r.name).sort(),
            via: 'admin',
          },
        },
      ])
    }
  })
}
