// The roles and user_roles tables (CONTRACT §17): every write to them is here.
import type { Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, eq, inArray, sql } from '../../db/orm.ts'
import { roles, userRoles } from '../../db/schema.ts'

export type Role = typeof roles.$inferSelect
export type NewRole = typeof roles.$inferInsert

/** A page of the tenant's custom roles, oldest first, after the role `after` names. */
export const listRoles = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, roles, tenantId, page)

export async function findRole(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .select()
    .from(roles)
    .where(and(eq(roles.tenantId, tenantId), eq(roles.id, id)))
  return rows[0] as Role | undefined
}

/** The tenant's roles named (any case), for assignment. */
export async function findRolesByName(db: Handle, tenantId: string, names: string[]) {
  if (names.length === 0) return []
  return db
    .select()
    .from(roles)
    .where(
      and(
        eq(roles.tenantId, tenantId),
        inArray(
          roles.nameNormalized,
          names.map((n) => n.toLowerCase()),
        ),
      ),
    )
}

export async function countRoles(db: Handle, tenantId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(roles)
    .where(eq(roles.tenantId, tenantId))
  return row.n
}

/** Serialises the role changes of a tenant (the limit, no-escalation reads). */
export async function lockTenantRoles(db: Handle, tenantId: string): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`roles:${tenantId}`}))`)
}

/** Inserts a role; undefined when the name is taken in the tenant. */
export async function insertRole(db: Handle, row: NewRole): Promise<Role | undefined> {
  const rows = await db.insert(roles).values(row).onConflictDoNothing().returning()
  return rows[0]
}

export async function updateRole(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewRole>,
): Promise<Role | undefined> {
  const rows = await db
    .update(roles)
    .set(changes)
    .where(and(eq(roles.tenantId, tenantId), eq(roles.id, id)))
    .returning()
  return rows[0]
}

/** Deletes a role; user_roles rows go with it (the foreign key cascades). */
export async function deleteRole(db: Handle, tenantId: string, id: string): Promise<boolean> {
  const rows = await db
    .delete(roles)
    .where(and(eq(roles.tenantId, tenantId), eq(roles.id, id)))
    .returning({ id: roles.id })
  return rows.length > 0
}

/**
 * SQL of the ids of the custom roles a user holds: directly (user_roles, of any source) or
 * through the groups it is a member of (CONTRACT §17). `tenant` and `user` are SQL
 * expressions (the outer statement's columns, or parameters), so the records, the admin
 * check and the token reads keep reading a user's roles in the statement they had.
 */
const heldRoleIds = (tenant: string, user: string) =>
  `(SELECT ur.role_id FROM user_roles ur WHERE ur.tenant_id = ${tenant} AND ur.user_id = ${user} UNION SELECT gr.role_id FROM group_members gm JOIN group_roles gr ON gr.tenant_id = gm.tenant_id AND gr.group_id = gm.group_id WHERE gm.tenant_id = ${tenant} AND gm.user_id = ${user})`

/** The custom roles a user holds, directly or through its groups. */
export async function userRoleRows(db: Handle, tenantId: string, userId: string) {
  return db
    .select()
    .from(roles)
    .where(
      sql`${roles.tenantId} = ${tenantId} AND ${roles.id} IN (SELECT ur.role_id FROM user_roles ur WHERE ur.tenant_id = ${tenantId} AND ur.user_id = ${userId} UNION SELECT gr.role_id FROM group_members gm JOIN group_roles gr ON gr.tenant_id = gm.tenant_id AND gr.group_id = gm.group_id WHERE gm.tenant_id = ${tenantId} AND gm.user_id = ${userId})`,
    )
}

/** The custom roles a user holds directly (PUT users/{id}/roles sets them). */
export async function directRoleRows(db: Handle, tenantId: string, userId: string) {
  return db
    .select({ role: roles })
    .from(userRoles)
    .innerJoin(roles, and(eq(roles.tenantId, userRoles.tenantId), eq(roles.id, userRoles.roleId)))
    .where(
      and(
        eq(userRoles.tenantId, tenantId),
        eq(userRoles.userId, userId),
        eq(userRoles.source, 'direct'),
      ),
    )
    .then((rows) => rows.map((r) => r.role))
}

/** The names of the custom roles a user holds, sorted as the record sorts them. */
export async function userRoleNames(db: Handle, tenantId: string, userId: string) {
  const held = await userRoleRows(db, tenantId, userId)
  return sortedRoleNames(held.map((r) => [r.nameNormalized, r.name]))
}

/** Role names by their normalised name, as `userRoleNames` and the token's `roles` claim sort them. */
function sortedRoleNames(pairs: [normalized: string, name: string][]): string[] {
  return pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((pair) => pair[1])
}

/**
 * SQL of the custom roles a user holds (directly or through groups) as a JSON array of
 * `[name_normalized, name]`, for a statement that already reads or writes rows of that user
 * (the refresh's rotation, the session start): its role names come with it, no second
 * query. `tenant` and `user` are SQL expressions (a parameter, a column); read the value
 * with `roleNamesFromJson`, which sorts as `userRoleNames` does.
 */
export const heldRoleNamesJson = (tenant: string, user: string) =>
  `(SELECT coalesce(json_agg(json_build_array(r.name_normalized, r.name)), '[]'::json) FROM roles r WHERE r.tenant_id = ${tenant} AND r.id IN ${heldRoleIds(tenant, user)})`

/** The role names of a `heldRoleNamesJson` value, sorted as `userRoleNames` sorts them. */
export function roleNamesFromJson(value: unknown): string[] {
  const pairs = (typeof value === 'string' ? JSON.parse(value) : (value ?? [])) as [
    string,
    string,
  ][]
  return sortedRoleNames(pairs)
}

/**
 * The names of the custom roles each of `userIds` holds (directly or through groups),
 * sorted, in one statement: what a group change compares before and after.
 */
export async function roleNamesOfUsers(
  db: Handle,
  tenantId: string,
  userIds: readonly string[],
): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>(userIds.map((id) => [id, []]))
  if (userIds.length === 0) return found
  const { rows } = (await db.execute(
    sql`SELECT u.id AS "userId", r.name AS "name" FROM unnest(${sql.param([...userIds])}::uuid[]) AS u(id) JOIN roles r ON r.tenant_id = ${tenantId} AND r.id IN (SELECT ur.role_id FROM user_roles ur WHERE ur.tenant_id = ${tenantId} AND ur.user_id = u.id UNION SELECT gr.role_id FROM group_members gm JOIN group_roles gr ON gr.tenant_id = gm.tenant_id AND gr.group_id = gm.group_id WHERE gm.tenant_id = ${tenantId} AND gm.user_id = u.id) ORDER BY r.name_normalized`,
  )) as unknown as { rows: { userId: string; name: string }[] }
  for (const row of rows) found.get(row.userId)?.push(row.name)
  return found
}

/**
 * Replaces the user's roles of one source with `roleIds`: `direct` (PUT users/{id}/roles;
 * a role the SSO mapping gave becomes direct, the admin chose it) or `sso` (an SSO
 * connection's roleMapping; a role the user holds directly stays direct, CONTRACT §17:
 * direct roles are kept).
 */
async function replaceRolesOf(
  db: Handle,
  source: 'direct' | 'sso',
  tenantId: string,
  userId: string,
  roleIds: string[],
  now: Date,
): Promise<void> {
  await db
    .delete(userRoles)
    .where(
      and(
        eq(userRoles.tenantId, tenantId),
        eq(userRoles.userId, userId),
        eq(userRoles.source, source),
      ),
    )
  if (roleIds.length === 0) return
  const insert = db
    .insert(userRoles)
    .values(roleIds.map((roleId) => ({ tenantId, userId, roleId, source, createdAt: now })))
  await (source === 'direct'
    ? insert.onConflictDoUpdate({
        target: [userRoles.tenantId, userRoles.userId, userRoles.roleId],
        set: { source: 'direct' },
      })
    : insert.onConflictDoNothing())
}

/** Replaces the user's direct roles with `roleIds`. */
export function replaceUserRoles(
  db: Handle,
  tenantId: string,
  userId: string,
  roleIds: string[],
  now: Date,
): Promise<void> {
  return replaceRolesOf(db, 'direct', tenantId, userId, roleIds, now)
}

/**
 * SQL of a user's custom role names (held directly or through groups), sorted, for the
 * user record's raw SELECT list (the row's own statement: no second query). `users` is the
 * users row.
 */
export const ROLE_NAMES_SQL = `ARRAY(SELECT r.name FROM roles r WHERE r.tenant_id = users.tenant_id AND r.id IN ${heldRoleIds('users.tenant_id', 'users.id')} ORDER BY r.name_normalized)`

/**
 * SQL of the tenant permissions a user's custom roles grant (direct and through groups),
 * for the admin check's read of the user row (one statement).
 */
export const ROLE_PERMISSIONS_SQL = `ARRAY(SELECT DISTINCT p FROM roles r, jsonb_array_elements_text(r.permissions) p WHERE r.tenant_id = users.tenant_id AND r.id IN ${heldRoleIds('users.tenant_id', 'users.id')})`

/** Gives the user the roles `roleIds` it does not hold yet; answers the ids it gained. */
export async function addUserRoles(
  db: Handle,
  tenantId: string,
  userId: string,
  roleIds: string[],
  now: Date,
): Promise<string[]> {
  if (roleIds.length === 0) return []
  const rows = await db
    .insert(userRoles)
    .values(roleIds.map((roleId) => ({ tenantId, userId, roleId, createdAt: now })))
    .onConflictDoNothing()
    .returning({ roleId: userRoles.roleId })
  return rows.map((r) => r.roleId)
}

/** The tenant's roles of these ids (a deleted one is simply absent). */
export async function findRolesByIds(db: Handle, tenantId: string, ids: readonly string[]) {
  if (ids.length === 0) return []
  return db
    .select()
    .from(roles)
    .where(and(eq(roles.tenantId, tenantId), inArray(roles.id, [...ids])))
}

/** Replaces the roles an SSO connection's roleMapping gave the user with `roleIds`. */
export function replaceSsoRoles(
  db: Handle,
  tenantId: string,
  userId: string,
  roleIds: string[],
  now: Date,
): Promise<void> {
  return replaceRolesOf(db, 'sso', tenantId, userId, roleIds, now)
}
