// The groups, group_members and group_roles tables (CONTRACT §17): every write to them is
// here. Members are read as live users of the tenant only (a soft-deleted user is no
// member anyone sees, and holds nothing: it cannot sign in).
import type { Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, asc, eq, inArray, isNull, type SQL, sql } from '../../db/orm.ts'
import { groupMembers, groupRoles, groups, roles, users } from '../../db/schema.ts'

export type Group = typeof groups.$inferSelect
export type NewGroup = typeof groups.$inferInsert
export type Role = typeof roles.$inferSelect

export interface Member {
  userId: string
  email: string
  displayName: string | null
}

export type GroupClause = { attribute: 'displayName' | 'externalId'; value: string }

function condition(clause: GroupClause): SQL {
  return clause.attribute === 'displayName'
    ? // displayName is not case-exact (RFC 7643 §4.2): the lower-cased name, as stored.
      eq(groups.displayNameNormalized, clause.value.toLowerCase())
    : eq(groups.externalId, clause.value)
}

/** SCIM's list window: the tenant's groups matching the clauses, oldest first. */
export async function findGroups(
  db: Handle,
  tenantId: string,
  clauses: GroupClause[],
  window: { offset: number; limit: number },
): Promise<{ total: number; groups: Group[] }> {
  const where = and(eq(groups.tenantId, tenantId), ...clauses.map(condition))
  const [{ total }] = await db
    .select({ total: sql<number>`count(*)::int` })
    .from(groups)
    .where(where)
  if (window.limit === 0) return { total, groups: [] }
  const rows = await db
    .select()
    .from(groups)
    .where(where)
    .orderBy(asc(groups.createdAt), asc(groups.id))
    .limit(window.limit)
    .offset(window.offset)
  return { total, groups: rows }
}

/** The admin list's page: oldest first, after the row `after` names. */
export const groupPage = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, groups, tenantId, page)

/** A membership's user, when the user is live (a deleted user is a member of nothing). */
const liveMember = and(
  eq(users.tenantId, groupMembers.tenantId),
  eq(users.id, groupMembers.userId),
  isNull(users.deletedAt),
)

/** How many live members each of the groups has. */
export async function memberCounts(db: Handle, tenantId: string, groupIds: string[]) {
  const found = new Map<string, number>(groupIds.map((id) => [id, 0]))
  if (groupIds.length === 0) return found
  const rows = await db
    .select({ groupId: groupMembers.groupId, n: sql<number>`count(*)::int` })
    .from(groupMembers)
    .innerJoin(users, liveMember)
    .where(and(eq(groupMembers.tenantId, tenantId), inArray(groupMembers.groupId, groupIds)))
    .groupBy(groupMembers.groupId)
  for (const row of rows) found.set(row.groupId, row.n)
  return found
}

export async function findGroup(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .select()
    .from(groups)
    .where(and(eq(groups.tenantId, tenantId), eq(groups.id, id)))
  return rows[0] as Group | undefined
}

/** The group row locked for a change (members and roles change under it). */
export async function lockGroup(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .select()
    .from(groups)
    .where(and(eq(groups.tenantId, tenantId), eq(groups.id, id)))
    .for('update')
  return rows[0] as Group | undefined
}

/** Inserts a group; undefined when the displayName is taken in the tenant. */
export async function insertGroup(db: Handle, row: NewGroup): Promise<Group | undefined> {
  const rows = await db.insert(groups).values(row).onConflictDoNothing().returning()
  return rows[0]
}

export async function updateGroup(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewGroup>,
): Promise<Group | undefined> {
  const rows = await db
    .update(groups)
    .set(changes)
    .where(and(eq(groups.tenantId, tenantId), eq(groups.id, id)))
    .returning()
  return rows[0]
}

/** Deletes a group; its members and roles rows go with it (the foreign keys cascade). */
export async function deleteGroup(db: Handle, tenantId: string, id: string): Promise<boolean> {
  const rows = await db
    .delete(groups)
    .where(and(eq(groups.tenantId, tenantId), eq(groups.id, id)))
    .returning({ id: groups.id })
  return rows.length > 0
}

/** The live members of the groups `groupIds`, by group, in the order they joined. */
export async function membersOf(
  db: Handle,
  tenantId: string,
  groupIds: string[],
): Promise<Map<string, Member[]>> {
  const found = new Map<string, Member[]>(groupIds.map((id) => [id, []]))
  if (groupIds.length === 0) return found
  const rows = await db
    .select({
      groupId: groupMembers.groupId,
      userId: users.id,
      email: users.email,
      displayName: users.displayName,
    })
    .from(groupMembers)
    .innerJoin(users, liveMember)
    .where(and(eq(groupMembers.tenantId, tenantId), inArray(groupMembers.groupId, groupIds)))
    .orderBy(asc(groupMembers.createdAt), asc(groupMembers.userId))
  for (const { groupId, ...member } of rows) found.get(groupId)?.push(member)
  return found
}

/** Of `userIds`, those that are live users of the tenant. */
export async function liveUserIds(
  db: Handle,
  tenantId: string,
  userIds: string[],
): Promise<Set<string>> {
  if (userIds.length === 0) return new Set()
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.tenantId, tenantId), inArray(users.id, userIds), isNull(users.deletedAt)))
  return new Set(rows.map((r) => r.id))
}

export async function addMembers(
  db: Handle,
  tenantId: string,
  groupId: string,
  userIds: string[],
  now: Date,
): Promise<void> {
  if (userIds.length === 0) return
  await db
    .insert(groupMembers)
    .values(userIds.map((userId) => ({ tenantId, groupId, userId, createdAt: now })))
    .onConflictDoNothing()
}

export async function removeMembers(
  db: Handle,
  tenantId: string,
  groupId: string,
  userIds: string[],
): Promise<void> {
  if (userIds.length === 0) return
  await db
    .delete(groupMembers)
    .where(
      and(
        eq(groupMembers.tenantId, tenantId),
        eq(groupMembers.groupId, groupId),
        inArray(groupMembers.userId, userIds),
      ),
    )
}

/** Every member row of the group, a soft-deleted user's too (a PUT replaces them all). */
export async function memberIds(db: Handle, tenantId: string, groupId: string) {
  const rows = await db
    .select({ userId: groupMembers.userId })
    .from(groupMembers)
    .where(and(eq(groupMembers.tenantId, tenantId), eq(groupMembers.groupId, groupId)))
  return rows.map((r) => r.userId)
}

/** The custom roles of the groups `groupIds`, by group, sorted by name. */
export async function rolesOf(
  db: Handle,
  tenantId: string,
  groupIds: string[],
): Promise<Map<string, Role[]>> {
  const found = new Map<string, Role[]>(groupIds.map((id) => [id, []]))
  if (groupIds.length === 0) return found
  const rows = await db
    .select({ groupId: groupRoles.groupId, role: roles })
    .from(groupRoles)
    .innerJoin(roles, and(eq(roles.tenantId, groupRoles.tenantId), eq(roles.id, groupRoles.roleId)))
    .where(and(eq(groupRoles.tenantId, tenantId), inArray(groupRoles.groupId, groupIds)))
    .orderBy(asc(roles.nameNormalized))
  for (const { groupId, role } of rows) found.get(groupId)?.push(role)
  return found
}

/** Replaces the group's roles with `roleIds`. */
export async function replaceGroupRoles(
  db: Handle,
  tenantId: string,
  groupId: string,
  roleIds: string[],
  now: Date,
): Promise<void> {
  await db
    .delete(groupRoles)
    .where(and(eq(groupRoles.tenantId, tenantId), eq(groupRoles.groupId, groupId)))
  if (roleIds.length === 0) return
  await db
    .insert(groupRoles)
    .values(roleIds.map((roleId) => ({ tenantId, groupId, roleId, createdAt: now })))
}

/** The normalised addresses of `userIds` (for the audit rows of their role changes). */
export async function emailsOf(db: Handle, tenantId: string, userIds: string[]) {
  if (userIds.length === 0) return new Map<string, string>()
  const rows = await db
    .select({ id: users.id, email: users.emailNormalized })
    .from(users)
    .where(and(eq(users.tenantId, tenantId), inArray(users.id, userIds)))
  return new Map(rows.map((r) => [r.id, r.email]))
}
