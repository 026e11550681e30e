// The organizations tables (CONTRACT §18): organizations, organization_domains,
// organization_members, organization_member_roles and organization_invitations; every
// write to them is here. Members are read as live users of the tenant only: a soft-deleted
// user is no member anyone sees and gets no organization token (it cannot sign in), and its
// rows go with the user row (ON DELETE CASCADE) or with the soft delete (deleteMembershipsOf).
import type { Handle } from '../../db/client.ts'
import { afterRow } from '../../db/keyset.ts'
import { and, asc, eq, gt, inArray, isNull, type SQL, sql } from '../../db/orm.ts'
import {
  organizationDomains,
  organizationInvitations,
  organizationMemberRoles,
  organizationMembers,
  organizations,
  roles,
  users,
} from '../../db/schema.ts'

export type Organization = typeof organizations.$inferSelect
export type NewOrganization = typeof organizations.$inferInsert
export type Invitation = typeof organizationInvitations.$inferSelect
export type NewInvitation = typeof organizationInvitations.$inferInsert

const liveMember = and(
  eq(users.tenantId, organizationMembers.tenantId),
  eq(users.id, organizationMembers.userId),
  isNull(users.deletedAt),
)

export async function countOrganizations(db: Handle, tenantId: string): Promise<number> {
  const [{ n }] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(organizations)
    .where(eq(organizations.tenantId, tenantId))
  return n
}

/** Serialises the creations of a tenant's organizations (the 10,000 limit holds under a burst). */
export async function lockTenantOrganizations(db: Handle, tenantId: string): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`organizations:${tenantId}`}))`)
}

export async function insertOrganization(db: Handle, row: NewOrganization): Promise<Organization> {
  const [created] = await db.insert(organizations).values(row).returning()
  return created
}

export async function findOrganization(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .select()
    .from(organizations)
    .where(and(eq(organizations.tenantId, tenantId), eq(organizations.id, id)))
  return rows[0] as Organization | undefined
}

export async function lockOrganization(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .select()
    .from(organizations)
    .where(and(eq(organizations.tenantId, tenantId), eq(organizations.id, id)))
    .for('update')
  return rows[0] as Organization | undefined
}

/**
 * The organization, its row held FOR KEY SHARE until the transaction ends: a row that names
 * it (an SSO connection, CONTRACT §18) or a membership made meanwhile cannot lose it to a
 * concurrent deletion, which waits for this transaction (and then nulls or deletes those).
 */
export async function holdOrganization(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .select()
    .from(organizations)
    .where(and(eq(organizations.tenantId, tenantId), eq(organizations.id, id)))
    .for('key share')
  return rows[0] as Organization | undefined
}

export async function updateOrganization(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewOrganization>,
): Promise<Organization | undefined> {
  const rows = await db
    .update(organizations)
    .set(changes)
    .where(and(eq(organizations.tenantId, tenantId), eq(organizations.id, id)))
    .returning()
  return rows[0]
}

/** Deletes an organization; its domains, members, roles and invitations go with it (cascade). */
export async function deleteOrganization(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .delete(organizations)
    .where(and(eq(organizations.tenantId, tenantId), eq(organizations.id, id)))
    .returning({ id: organizations.id })
  return rows.length > 0
}

/** The admin list's page: oldest first, after the row `after` names. */
export async function organizationPage(
  db: Handle,
  tenantId: string,
  options: { limit: number; after?: string },
): Promise<Organization[]> {
  return db
    .select()
    .from(organizations)
    .where(
      and(eq(organizations.tenantId, tenantId), afterRow(organizations, tenantId, options.after)),
    )
    .orderBy(asc(organizations.createdAt), asc(organizations.id))
    .limit(options.limit)
}

/** The JIT email domains of the organizations, by organization, sorted. */
export async function domainsOf(db: Handle, tenantId: string, organizationIds: string[]) {
  const found = new Map<string, string[]>(organizationIds.map((id) => [id, []]))
  if (organizationIds.length === 0) return found
  const rows = await db
    .select()
    .from(organizationDomains)
    .where(
      and(
        eq(organizationDomains.tenantId, tenantId),
        inArray(organizationDomains.organizationId, organizationIds),
      ),
    )
    .orderBy(asc(organizationDomains.domain))
  for (const row of rows) found.get(row.organizationId)?.push(row.domain)
  return found
}

/** The organization that claims `domain` for JIT membership, if any. */
export async function organizationOfDomain(db: Handle, tenantId: string, domain: string) {
  const rows = await db
    .select({ organization: organizations })
    .from(organizationDomains)
    .innerJoin(
      organizations,
      and(
        eq(organizations.tenantId, organizationDomains.tenantId),
        eq(organizations.id, organizationDomains.organizationId),
      ),
    )
    .where(and(eq(organizationDomains.tenantId, tenantId), eq(organizationDomains.domain, domain)))
  return rows[0]?.organization
}

/**
 * Replaces the organization's domains. A domain another organization of the tenant holds
 * fails the insert on the primary key (23505): the caller answers 409 domain_taken.
 */
export async function replaceDomains(
  db: Handle,
  tenantId: string,
  organizationId: string,
  domains: string[],
): Promise<void> {
  await db
    .delete(organizationDomains)
    .where(
      and(
        eq(organizationDomains.tenantId, tenantId),
        eq(organizationDomains.organizationId, organizationId),
      ),
    )
  if (domains.length === 0) return
  await db
    .insert(organizationDomains)
    .values(domains.map((domain) => ({ tenantId, organizationId, domain })))
}

/** How many live members each of the organizations has. */
export async function memberCounts(db: Handle, tenantId: string, organizationIds: string[]) {
  const found = new Map<string, number>(organizationIds.map((id) => [id, 0]))
  if (organizationIds.length === 0) return found
  const rows = await db
    .select({ organizationId: organizationMembers.organizationId, n: sql<number>`count(*)::int` })
    .from(organizationMembers)
    .innerJoin(users, liveMember)
    .where(
      and(
        eq(organizationMembers.tenantId, tenantId),
        inArray(organizationMembers.organizationId, organizationIds),
      ),
    )
    .groupBy(organizationMembers.organizationId)
  for (const row of rows) found.set(row.organizationId, row.n)
  return found
}

export interface MemberRow {
  userId: string
  email: string
  joinedAt: Date
}

/**
 * A page of the organization's live members, oldest membership first, after the member
 * `after` (a user id); keyset on (created_at, user_id), the organization_members_joined index.
 */
export async function memberPage(
  db: Handle,
  tenantId: string,
  organizationId: string,
  options: { limit: number; after?: string },
): Promise<MemberRow[]> {
  const after = options.after
    ? sql`(${organizationMembers.createdAt}, ${organizationMembers.userId}) > (
        SELECT m.created_at, m.user_id FROM organization_members m
        WHERE m.tenant_id = ${tenantId} AND m.organization_id = ${organizationId}
          AND m.user_id = ${options.after})`
    : undefined
  return db
    .select({
      userId: organizationMembers.userId,
      email: users.email,
      joinedAt: organizationMembers.createdAt,
    })
    .from(organizationMembers)
    .innerJoin(users, liveMember)
    .where(
      and(
        eq(organizationMembers.tenantId, tenantId),
        eq(organizationMembers.organizationId, organizationId),
        after,
      ),
    )
    .orderBy(asc(organizationMembers.createdAt), asc(organizationMembers.userId))
    .limit(options.limit)
}

/** Whether the user is a live member of the organization. */
export async function findMember(
  db: Handle,
  tenantId: string,
  organizationId: string,
  userId: string,
): Promise<MemberRow | undefined> {
  const rows = await db
    .select({
      userId: organizationMembers.userId,
      email: users.email,
      joinedAt: organizationMembers.createdAt,
    })
    .from(organizationMembers)
    .innerJoin(users, liveMember)
    .where(
      and(
        eq(organizationMembers.tenantId, tenantId),
        eq(organizationMembers.organizationId, organizationId),
        eq(organizationMembers.userId, userId),
      ),
    )
  return rows[0]
}

/** Adds the membership; answers whether it is new. */
export async function insertMember(
  db: Handle,
  tenantId: string,
  organizationId: string,
  userId: string,
  now: Date,
): Promise<boolean> {
  const rows = await db
    .insert(organizationMembers)
    .values({ tenantId, organizationId, userId, createdAt: now })
    .onConflictDoNothing()
    .returning({ userId: organizationMembers.userId })
  return rows.length > 0
}

export async function deleteMember(
  db: Handle,
  tenantId: string,
  organizationId: string,
  userId: string,
): Promise<boolean> {
  const rows = await db
    .delete(organizationMembers)
    .where(
      and(
        eq(organizationMembers.tenantId, tenantId),
        eq(organizationMembers.organizationId, organizationId),
        eq(organizationMembers.userId, userId),
      ),
    )
    .returning({ userId: organizationMembers.userId })
  return rows.length > 0
}

/** Every membership of the user goes (its account was deleted); answers the organizations. */
export async function deleteMembershipsOf(db: Handle, tenantId: string, userId: string) {
  const rows = await db
    .delete(organizationMembers)
    .where(and(eq(organizationMembers.tenantId, tenantId), eq(organizationMembers.userId, userId)))
    .returning({ organizationId: organizationMembers.organizationId })
  return rows.map((r) => r.organizationId)
}

/** A member's role assignment joined to the role it names. */
const heldRole = and(
  eq(roles.tenantId, organizationMemberRoles.tenantId),
  eq(roles.id, organizationMemberRoles.roleId),
)

/** Role assignments of one organization of the tenant, for the members `who` names. */
const inOrganization = (tenantId: string, organizationId: string, who: SQL | undefined) =>
  and(
    eq(organizationMemberRoles.tenantId, tenantId),
    eq(organizationMemberRoles.organizationId, organizationId),
    who,
  )

/** The organization roles of the members `userIds`, by user, sorted by name. */
export async function memberRoles(
  db: Handle,
  tenantId: string,
  organizationId: string,
  userIds: string[],
) {
  const found = new Map<string, string[]>(userIds.map((id) => [id, []]))
  if (userIds.length === 0) return found
  const rows = await db
    .select({ userId: organizationMemberRoles.userId, name: roles.name })
    .from(organizationMemberRoles)
    .innerJoin(roles, heldRole)
    .where(
      inOrganization(tenantId, organizationId, inArray(organizationMemberRoles.userId, userIds)),
    )
    .orderBy(asc(roles.nameNormalized))
  for (const row of rows) found.get(row.userId)?.push(row.name)
  return found
}

/** The organization roles (full rows) one member holds in one organization. */
export async function memberRoleRows(
  db: Handle,
  tenantId: string,
  organizationId: string,
  userId: string,
) {
  const rows = await db
    .select({ role: roles })
    .from(organizationMemberRoles)
    .innerJoin(roles, heldRole)
    .where(inOrganization(tenantId, organizationId, eq(organizationMemberRoles.userId, userId)))
    .orderBy(asc(roles.nameNormalized))
  return rows.map((r) => r.role)
}

/**
 * The organization roles (full rows, each once) the user holds in any organization of the
 * tenant: what an authorization may put in a grant (oidc/resources.ts, grantableScopes).
 * Led by the user's memberships (the organization_members_tenant_user index), so its cost
 * follows the user's own memberships, as membershipsOf's.
 */
export async function heldOrganizationRoleRows(db: Handle, tenantId: string, userId: string) {
  const rows = await db
    .selectDistinct({ role: roles })
    .from(organizationMembers)
    .innerJoin(
      organizationMemberRoles,
      and(
        eq(organizationMemberRoles.tenantId, organizationMembers.tenantId),
        eq(organizationMemberRoles.organizationId, organizationMembers.organizationId),
        eq(organizationMemberRoles.userId, organizationMembers.userId),
      ),
    )
    .innerJoin(roles, heldRole)
    .where(and(eq(organizationMembers.tenantId, tenantId), eq(organizationMembers.userId, userId)))
  return rows.map((r) => r.role)
}

/** Replaces the member's roles in the organization with `roleIds`. */
export async function replaceMemberRoles(
  db: Handle,
  tenantId: string,
  organizationId: string,
  userId: string,
  roleIds: string[],
): Promise<void> {
  await db
    .delete(organizationMemberRoles)
    .where(inOrganization(tenantId, organizationId, eq(organizationMemberRoles.userId, userId)))
  if (roleIds.length === 0) return
  await db
    .insert(organizationMemberRoles)
    .values(roleIds.map((roleId) => ({ tenantId, organizationId, userId, roleId })))
    .onConflictDoNothing()
}

/**
 * The user's memberships with their organization's name and the roles held there, by
 * name: one statement on the organization_members_tenant_user index, so its cost follows
 * the user's own memberships, not the tenant's organizations.
 */
export async function membershipsOf(db: Handle, tenantId: string, userId: string) {
  const rows = await db
    .select({
      id: organizations.id,
      name: organizations.name,
      roles: sql<string[]>`coalesce((
        SELECT array_agg(r.name ORDER BY r.name_normalized)
        FROM organization_member_roles mr
        JOIN roles r ON r.tenant_id = mr.tenant_id AND r.id = mr.role_id
        WHERE mr.tenant_id = ${organizationMembers.tenantId}
          AND mr.organization_id = ${organizationMembers.organizationId}
          AND mr.user_id = ${organizationMembers.userId}
      ), '{}')`,
    })
    .from(organizationMembers)
    .innerJoin(
      organizations,
      and(
        eq(organizations.tenantId, organizationMembers.tenantId),
        eq(organizations.id, organizationMembers.organizationId),
      ),
    )
    .where(and(eq(organizationMembers.tenantId, tenantId), eq(organizationMembers.userId, userId)))
    .orderBy(asc(organizations.name), asc(organizations.id))
  return rows
}

// ---- invitations ------------------------------------------------------------------------

/** Revokes the pending invitation of the address to the organization (a new one replaces it). */
export async function revokePendingInvitation(
  db: Handle,
  tenantId: string,
  organizationId: string,
  emailNormalized: string,
  now: Date,
) {
  return db
    .update(organizationInvitations)
    .set({ revokedAt: now })
    .where(
      and(
        eq(organizationInvitations.tenantId, tenantId),
        eq(organizationInvitations.organizationId, organizationId),
        eq(organizationInvitations.emailNormalized, emailNormalized),
        isNull(organizationInvitations.acceptedAt),
        isNull(organizationInvitations.revokedAt),
      ),
    )
    .returning()
}

export async function insertInvitation(db: Handle, row: NewInvitation): Promise<Invitation> {
  const [created] = await db.insert(organizationInvitations).values(row).returning()
  return created
}

export async function invitationPage(
  db: Handle,
  tenantId: string,
  organizationId: string,
  options: { limit: number; after?: string },
): Promise<Invitation[]> {
  return db
    .select()
    .from(organizationInvitations)
    .where(
      and(
        eq(organizationInvitations.tenantId, tenantId),
        eq(organizationInvitations.organizationId, organizationId),
        afterRow(organizationInvitations, tenantId, options.after),
      ),
    )
    .orderBy(asc(organizationInvitations.createdAt), asc(organizationInvitations.id))
    .limit(options.limit)
}

export async function findInvitation(
  db: Handle,
  tenantId: string,
  organizationId: string,
  id: string,
) {
  const rows = await db
    .select()
    .from(organizationInvitations)
    .where(
      and(
        eq(organizationInvitations.tenantId, tenantId),
        eq(organizationInvitations.organizationId, organizationId),
        eq(organizationInvitations.id, id),
      ),
    )
  return rows[0] as Invitation | undefined
}

export async function findInvitationByHash(db: Handle, tenantId: string, tokenHash: string) {
  const rows = await db
    .select()
    .from(organizationInvitations)
    .where(
      and(
        eq(organizationInvitations.tenantId, tenantId),
        eq(organizationInvitations.tokenHash, tokenHash),
      ),
    )
  return rows[0] as Invitation | undefined
}

/** Revokes a pending invitation; undefined when it was not pending. */
export async function revokeInvitation(
  db: Handle,
  tenantId: string,
  organizationId: string,
  id: string,
  now: Date,
) {
  const rows = await db
    .update(organizationInvitations)
    .set({ revokedAt: now })
    .where(
      and(
        eq(organizationInvitations.tenantId, tenantId),
        eq(organizationInvitations.organizationId, organizationId),
        eq(organizationInvitations.id, id),
        isNull(organizationInvitations.acceptedAt),
        isNull(organizationInvitations.revokedAt),
      ),
    )
    .returning()
  return rows[0] as Invitation | undefined
}

/**
 * Spends the invitation in one statement (STYLE: single-use things): of two accepts of one
 * token only one gets the row back; a used, revoked or expired one none.
 */
export async function spendInvitation(
  db: Handle,
  tenantId: string,
  id: string,
  userId: string,
  now: Date,
) {
  const rows = await db
    .update(organizationInvitations)
    .set({ acceptedAt: now, acceptedUserId: userId })
    .where(
      and(
        eq(organizationInvitations.tenantId, tenantId),
        eq(organizationInvitations.id, id),
        isNull(organizationInvitations.acceptedAt),
        isNull(organizationInvitations.revokedAt),
        gt(organizationInvitations.expiresAt, now),
      ),
    )
    .returning()
  return rows[0] as Invitation | undefined
}
