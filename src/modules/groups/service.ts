// Groups (CONTRACT §17): a tenant's groups, provisioned by SCIM (scim/groups.ts speaks the
// protocol; this file holds the rules), and the custom roles every member holds while a
// member (PUT groups/{id}/roles). Every change is one transaction that also writes its
// audit rows:
//   - GroupProvisioned / GroupUpdated / GroupDeprovisioned (metadata.via "scim", or "admin"
//     for a change of the group's roles);
//   - UserRolesChanged with via "group" for each user whose custom roles (direct ∪ through
//     groups) changed: a member added to or removed from a group holding roles, a group's
//     roles changed, a group holding roles deleted. A change that leaves a user's roles as
//     they were (a role also held directly, a group without roles) records none.
// No escalation (the rule of PUT users/{id}/roles): changing who is a member of a group
// that holds roles grants or takes away those roles, so the caller must hold every
// permission and resource scope of them (else 403 permission_required).
import type { Handle } from '../../db/client.ts'
import { databaseFailure } from '../../db/errors.ts'
import type { Deps } from '../../deps.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { AuditEntry } from '../audit/recorder.ts'
import { resolveRoleNames } from '../roles/grant.ts'
import { lockTenantRoles, roleNamesOfUsers } from '../roles/members.ts'
import { type Caller, refuseEscalation } from '../roles/service.ts'
import * as store from './queries.ts'

type GroupDeps = Pick<Deps, 'audit' | 'clock' | 'db'>

/** What a SCIM client writes: the name, its own id, and the members by user id. */
export interface GroupState {
  displayName: string
  externalId: string | null
  memberIds: string[]
}

/** A group with its live members and its roles, as both interfaces show it. */
export interface GroupView {
  group: store.Group
  members: store.Member[]
  roles: store.Role[]
}

export type Via = 'scim' | 'admin'

const MAX_NAME = 256

const invalid = (path: string, message: string): never => {
  throw new AppError('validation', { message, details: { issues: [{ path, message }] } })
}

const nameTaken = () =>
  new AppError('name_taken', { message: 'Another group of this workspace has this displayName.' })

export async function readGroup(
  db: Handle,
  tenantId: string,
  id: string,
): Promise<GroupView | undefined> {
  if (!isUuid(id)) return undefined
  const group = await store.findGroup(db, tenantId, id)
  return group ? view(db, tenantId, group) : undefined
}

async function view(db: Handle, tenantId: string, group: store.Group): Promise<GroupView> {
  // One after the other: `db` may be a transaction, whose connection takes one at a time.
  const members = await store.membersOf(db, tenantId, [group.id])
  const roles = await store.rolesOf(db, tenantId, [group.id])
  return { group, members: members.get(group.id) ?? [], roles: roles.get(group.id) ?? [] }
}

/** The members and roles of a window of groups, in two statements. */
export async function views(db: Handle, tenantId: string, groups: store.Group[]) {
  const ids = groups.map((g) => g.id)
  const members = await store.membersOf(db, tenantId, ids)
  const roles = await store.rolesOf(db, tenantId, ids)
  return groups.map(
    (group): GroupView => ({
      group,
      members: members.get(group.id) ?? [],
      roles: roles.get(group.id) ?? [],
    }),
  )
}

/** The state checked: a name, an externalId within bounds, members that are live users. */
async function checkState(db: Handle, tenantId: string, state: GroupState): Promise<GroupState> {
  const displayName = state.displayName.trim()
  if (displayName.length === 0 || displayName.length > MAX_NAME) {
    invalid('displayName', `displayName must be 1 to ${MAX_NAME} characters.`)
  }
  if (
    state.externalId !== null &&
    (state.externalId.length === 0 || state.externalId.length > 256)
  ) {
    invalid('externalId', 'externalId must be 1 to 256 characters.')
  }
  const memberIds = [...new Set(state.memberIds.map((id) => id.toLowerCase()))]
  const bad = memberIds.find((id) => !isUuid(id))
  if (bad !== undefined) invalid('members', `${clip(bad)} is not a user of this workspace.`)
  const live = await store.liveUserIds(db, tenantId, memberIds)
  const unknown = memberIds.find((id) => !live.has(id))
  if (unknown !== undefined) invalid('members', `${unknown} is not a user of this workspace.`)
  return { displayName, externalId: state.externalId, memberIds }
}

const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text)

/** UserRolesChanged (via "group") for each user whose roles differ between the two reads. */
function roleChanges(
  before: Map<string, string[]>,
  after: Map<string, string[]>,
  emails: Map<string, string>,
): AuditEntry[] {
  const entries: AuditEntry[] = []
  for (const [userId, was] of before) {
    const now = after.get(userId) ?? []
    const added = now.filter((n) => !was.includes(n)).sort()
    const removed = was.filter((n) => !now.includes(n)).sort()
    if (added.length === 0 && removed.length === 0) continue
    entries.push({
      action: 'UserRolesChanged',
      userId,
      email: emails.get(userId) ?? null,
      metadata: { added, removed, via: 'group' },
    })
  }
  return entries
}

/** Runs `change` between two reads of the roles of `userIds`; answers their audit rows. */
async function trackRoles(
  tx: Handle,
  tenantId: string,
  userIds: string[],
  change: () => Promise<void>,
): Promise<AuditEntry[]> {
  const before = await roleNamesOfUsers(tx, tenantId, userIds)
  await change()
  const after = await roleNamesOfUsers(tx, tenantId, userIds)
  const emails = await store.emailsOf(tx, tenantId, userIds)
  return roleChanges(before, after, emails)
}

async function unique<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (databaseFailure(error)?.code === '23505') throw nameTaken()
    throw error
  }
}

/** POST Groups: a new group with its members (it holds no roles yet). */
export async function createGroup(
  deps: GroupDeps,
  tenantId: string,
  input: GroupState,
  caller: Caller,
): Promise<GroupView> {
  const now = deps.clock.now()
  return unique(() =>
    deps.db.transaction(async (tx) => {
      const state = await checkState(tx, tenantId, input)
      const group = await store.insertGroup(tx, {
        tenantId,
        id: uuidv7(now.getTime()),
        displayName: state.displayName,
        displayNameNormalized: state.displayName.toLowerCase(),
        externalId: state.externalId,
        createdAt: now,
        updatedAt: now,
      })
      if (!group) throw nameTaken()
      await store.addMembers(tx, tenantId, group.id, state.memberIds, now)
      await deps.audit.record(tx, tenantId, caller.actor, [
        {
          action: 'GroupProvisioned',
          metadata: {
            via: 'scim',
            groupId: group.id,
            displayName: group.displayName,
            members: state.memberIds.length,
          },
        },
      ])
      return view(tx, tenantId, group)
    }),
  )
}

/**
 * PUT and PATCH Groups/{id}: `plan` answers the group's next state from its current view
 * (members as their ids); `check` sees the locked group first (If-Match).
 */
export async function changeGroup(
  deps: GroupDeps,
  tenantId: string,
  id: string,
  plan: (current: GroupView) => GroupState,
  caller: Caller,
  check: (current: GroupView) => void = () => {},
): Promise<GroupView> {
  if (!isUuid(id)) fail('not_found')
  const now = deps.clock.now()
  return unique(() =>
    deps.db.transaction(async (tx) => {
      const locked = await store.lockGroup(tx, tenantId, id)
      if (!locked) fail('not_found')
      const current = await view(tx, tenantId, locked)
      check(current)
      const state = await checkState(tx, tenantId, plan(current))
      const had = new Set(await store.memberIds(tx, tenantId, id))
      const wanted = new Set(state.memberIds)
      const added = [...wanted].filter((u) => !had.has(u))
      // A soft-deleted user's row stays unless the client named the user (it cannot: the
      // user is no member it sees), so only live members are taken out.
      const removed = current.members.map((m) => m.userId).filter((u) => !wanted.has(u))
      if (current.roles.length > 0 && added.length + removed.length > 0) {
        await refuseEscalation(tx, tenantId, caller, current.roles)
      }
      const fields: string[] = []
      if (state.displayName !== locked.displayName) fields.push('displayName')
      if (state.externalId !== locked.externalId) fields.push('externalId')
      if (added.length + removed.length > 0) fields.push('members')
      if (fields.length === 0) return current
      const entries = await trackRoles(tx, tenantId, [...added, ...removed], async () => {
        await store.removeMembers(tx, tenantId, id, removed)
        await store.addMembers(tx, tenantId, id, added, now)
      })
      const group = await store.updateGroup(tx, tenantId, id, {
        displayName: state.displayName,
        displayNameNormalized: state.displayName.toLowerCase(),
        externalId: state.externalId,
        updatedAt: now,
      })
      if (!group) fail('not_found')
      await deps.audit.record(tx, tenantId, caller.actor, [
        {
          action: 'GroupUpdated',
          metadata: {
            via: 'scim',
            groupId: id,
            displayName: group.displayName,
            fields,
            membersAdded: added.length,
            membersRemoved: removed.length,
          },
        },
        ...entries,
      ])
      return view(tx, tenantId, group)
    }),
  )
}

/** DELETE Groups/{id}: the group goes; its members lose the roles they held through it. */
export async function deleteGroup(
  deps: GroupDeps,
  tenantId: string,
  id: string,
  caller: Caller,
  check: (current: GroupView) => void = () => {},
): Promise<void> {
  if (!isUuid(id)) fail('not_found')
  await deps.db.transaction(async (tx) => {
    const locked = await store.lockGroup(tx, tenantId, id)
    if (!locked) fail('not_found')
    const current = await view(tx, tenantId, locked)
    check(current)
    const members = current.members.map((m) => m.userId)
    if (current.roles.length > 0 && members.length > 0) {
      await refuseEscalation(tx, tenantId, caller, current.roles)
    }
    const entries = await trackRoles(tx, tenantId, members, async () => {
      await store.deleteGroup(tx, tenantId, id)
    })
    await deps.audit.record(tx, tenantId, caller.actor, [
      {
        action: 'GroupDeprovisioned',
        metadata: { via: 'scim', groupId: id, displayName: locked.displayName },
      },
      ...entries,
    ])
  })
}

export type { GroupClause } from './queries.ts'

/** SCIM's list window of the tenant's groups (filter clauses, offset and count). */
export function findGroupWindow(
  db: Handle,
  tenantId: string,
  clauses: store.GroupClause[],
  window: { offset: number; limit: number },
) {
  return store.findGroups(db, tenantId, clauses, window)
}

/** PUT groups/{id}/roles: sets the custom roles every member holds, by name. */
export async function setGroupRoles(
  deps: GroupDeps,
  tenantId: string,
  id: string,
  names: string[],
  caller: Caller,
): Promise<GroupView> {
  if (!isUuid(id)) fail('not_found')
  const now = deps.clock.now()
  return deps.db.transaction(async (tx) => {
    await lockTenantRoles(tx, tenantId)
    const locked = await store.lockGroup(tx, tenantId, id)
    if (!locked) fail('not_found')
    const resolved = await resolveRoleNames(tx, tenantId, names)
    if ('unknown' in resolved) {
      invalid(`body.roles.${resolved.unknown}`, `unknown role ${names[resolved.unknown]}`)
      throw new Error('unreachable')
    }
    const current = await view(tx, tenantId, locked)
    const added = resolved.roles.filter((r) => !current.roles.some((c) => c.id === r.id))
    const removed = current.roles.filter((c) => !resolved.roles.some((r) => r.id === c.id))
    await refuseEscalation(tx, tenantId, caller, [...added, ...removed])
    if (added.length + removed.length === 0) return current
    const members = current.members.map((m) => m.userId)
    const entries = await trackRoles(tx, tenantId, members, async () => {
      await store.replaceGroupRoles(
        tx,
        tenantId,
        id,
        resolved.roles.map((r) => r.id),
        now,
      )
    })
    const group = (await store.updateGroup(tx, tenantId, id, { updatedAt: now })) ?? locked
    await deps.audit.record(tx, tenantId, caller.actor, [
      {
        action: 'GroupUpdated',
        metadata: {
          via: 'admin',
          groupId: id,
          displayName: group.displayName,
          fields: ['roles'],
          rolesAdded: added.map((r) => r.name).sort(),
          rolesRemoved: removed.map((r) => r.name).sort(),
        },
      },
      ...entries,
    ])
    return view(tx, tenantId, group)
  })
}

/** The admin API's record of a group (CONTRACT §17). */
export function presentGroup(v: GroupView) {
  return {
    id: v.group.id,
    displayName: v.group.displayName,
    externalId: v.group.externalId,
    roles: v.roles.map((r) => r.name),
    memberCount: v.members.length,
    createdAt: v.group.createdAt.toISOString(),
    updatedAt: v.group.updatedAt.toISOString(),
  }
}

export async function listGroupPage(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  query: { limit: number; cursor?: string },
) {
  const page = await readPage(
    query,
    ({ limit, after }) => store.groupPage(deps.db, tenantId, { limit, after }),
    (g) => g,
  )
  const ids = page.items.map((g) => g.id)
  const [roles, counts] = await Promise.all([
    store.rolesOf(deps.db, tenantId, ids),
    store.memberCounts(deps.db, tenantId, ids),
  ])
  return {
    items: page.items.map((group) => ({
      ...presentGroup({ group, members: [], roles: roles.get(group.id) ?? [] }),
      memberCount: counts.get(group.id) ?? 0,
    })),
    nextCursor: page.nextCursor,
  }
}
