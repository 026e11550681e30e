// Reading the database behind the HTTP API, so a test can prove that a refused request
// changed nothing, and see exactly which audit events a request recorded.
import assert from 'node:assert/strict'
import { and, asc, eq, sql } from '../src/db/orm.ts'
import {
  apiKeys,
  apiResources,
  applications,
  auditEvents,
  emailConflicts,
  emailTemplates,
  groupMembers,
  groupRoles,
  groups,
  hookCallLog,
  hooks,
  identities,
  invites,
  oidcModels,
  oneTimeCodes,
  organizationDomains,
  organizationInvitations,
  organizationMemberRoles,
  organizationMembers,
  organizations,
  passkeys,
  recoveryCodes,
  refreshTokens,
  rememberedDevices,
  roles,
  sessions,
  socialConnections,
  ssoConnections,
  ssoDomains,
  ssoSamlAssertions,
  tenantLogos,
  tenants,
  userRoles,
  users,
  webauthnChallenges,
  webhookDeliveries,
  webhooks,
} from '../src/db/schema.ts'
import type { Deps } from '../src/deps.ts'
import { normalizeEmail } from '../src/lib/email.ts'

type WithDeps = { deps: Deps }

/**
 * Tenant tables `tenantSnapshot` leaves out, and why; tables.test.ts requires every other
 * table with `tenant_id` to be read by it.
 */
export const SNAPSHOT_LEFT_OUT: Record<string, string> = {
  oauth_states: 'a refused callback spends its state; tests read it with `stateRow`',
}

/**
 * Every row a tenant owns, in a stable order: equal snapshots before and after a refused
 * request prove it changed nothing. Left out: an API key's lastUsedAt (written by a timer,
 * apikeys/usage.ts, for a key that authenticated even when the request was then refused),
 * the tables of SNAPSHOT_LEFT_OUT, and,
 * with `audit: false`, the audit events, for a refusal that records one (a failed sign-in)
 * and checks it on its own, and the hooks' call lines (a hook's deny records its call).
 */
export async function tenantSnapshot(
  server: WithDeps,
  tenantId: string,
  options: { audit?: boolean } = {},
) {
  const db = server.deps.db
  // A hook call's line is written after its answer, in the background: this instance's are
  // all written before the rows are read.
  await server.deps.hookLog.flushed()
  const keys = await db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.tenantId, tenantId))
    .orderBy(asc(apiKeys.id))
  return {
    tenant: await db.select().from(tenants).where(eq(tenants.id, tenantId)),
    logo: await db.select().from(tenantLogos).where(eq(tenantLogos.tenantId, tenantId)),
    emailTemplates: await db
      .select()
      .from(emailTemplates)
      .where(eq(emailTemplates.tenantId, tenantId))
      .orderBy(asc(emailTemplates.kind), asc(emailTemplates.locale)),
    users: await db.select().from(users).where(eq(users.tenantId, tenantId)).orderBy(asc(users.id)),
    sessions: await db
      .select()
      .from(sessions)
      .where(eq(sessions.tenantId, tenantId))
      .orderBy(asc(sessions.id)),
    tokens: await db
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.tenantId, tenantId))
      .orderBy(asc(refreshTokens.tokenHash)),
    codes: await codeRows(server, tenantId),
    identities: await db
      .select()
      .from(identities)
      .where(eq(identities.tenantId, tenantId))
      .orderBy(asc(identities.kind), asc(identities.source), asc(identities.subject)),
    recoveryCodes: await db
      .select()
      .from(recoveryCodes)
      .where(eq(recoveryCodes.tenantId, tenantId))
      .orderBy(asc(recoveryCodes.userId), asc(recoveryCodes.codeHash)),
    rememberedDevices: await db
      .select()
      .from(rememberedDevices)
      .where(eq(rememberedDevices.tenantId, tenantId))
      .orderBy(asc(rememberedDevices.tokenHash)),
    passkeys: await db
      .select()
      .from(passkeys)
      .where(eq(passkeys.tenantId, tenantId))
      .orderBy(asc(passkeys.id)),
    challenges: await db
      .select()
      .from(webauthnChallenges)
      .where(eq(webauthnChallenges.tenantId, tenantId))
      .orderBy(asc(webauthnChallenges.challengeHash)),
    apiKeys: keys.map(({ lastUsedAt: _, ...rest }) => rest),
    invites: await db
      .select()
      .from(invites)
      .where(eq(invites.tenantId, tenantId))
      .orderBy(asc(invites.id)),
    applications: await db
      .select()
      .from(applications)
      .where(eq(applications.tenantId, tenantId))
      .orderBy(asc(applications.id)),
    apiResources: await db
      .select()
      .from(apiResources)
      .where(eq(apiResources.tenantId, tenantId))
      .orderBy(asc(apiResources.id)),
    roles: await db.select().from(roles).where(eq(roles.tenantId, tenantId)).orderBy(asc(roles.id)),
    userRoles: await db
      .select()
      .from(userRoles)
      .where(eq(userRoles.tenantId, tenantId))
      .orderBy(asc(userRoles.userId), asc(userRoles.roleId)),
    groups: await db
      .select()
      .from(groups)
      .where(eq(groups.tenantId, tenantId))
      .orderBy(asc(groups.id)),
    groupMembers: await db
      .select()
      .from(groupMembers)
      .where(eq(groupMembers.tenantId, tenantId))
      .orderBy(asc(groupMembers.groupId), asc(groupMembers.userId)),
    groupRoles: await db
      .select()
      .from(groupRoles)
      .where(eq(groupRoles.tenantId, tenantId))
      .orderBy(asc(groupRoles.groupId), asc(groupRoles.roleId)),
    organizations: await db
      .select()
      .from(organizations)
      .where(eq(organizations.tenantId, tenantId))
      .orderBy(asc(organizations.id)),
    organizationDomains: await db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.tenantId, tenantId))
      .orderBy(asc(organizationDomains.domain)),
    organizationMembers: await db
      .select()
      .from(organizationMembers)
      .where(eq(organizationMembers.tenantId, tenantId))
      .orderBy(asc(organizationMembers.organizationId), asc(organizationMembers.userId)),
    organizationMemberRoles: await db
      .select()
      .from(organizationMemberRoles)
      .where(eq(organizationMemberRoles.tenantId, tenantId))
      .orderBy(
        asc(organizationMemberRoles.organizationId),
        asc(organizationMemberRoles.userId),
        asc(organizationMemberRoles.roleId),
      ),
    organizationInvitations: await db
      .select()
      .from(organizationInvitations)
      .where(eq(organizationInvitations.tenantId, tenantId))
      .orderBy(asc(organizationInvitations.id)),
    oidcModels: await db
      .select()
      .from(oidcModels)
      .where(eq(oidcModels.tenantId, tenantId))
      .orderBy(asc(oidcModels.model), asc(oidcModels.id)),
    emailConflicts: await db
      .select()
      .from(emailConflicts)
      .where(eq(emailConflicts.tenantId, tenantId))
      .orderBy(asc(emailConflicts.userId)),
    ssoConnections: await db
      .select()
      .from(ssoConnections)
      .where(eq(ssoConnections.tenantId, tenantId))
      .orderBy(asc(ssoConnections.id)),
    socialConnections: await db
      .select()
      .from(socialConnections)
      .where(eq(socialConnections.tenantId, tenantId))
      .orderBy(asc(socialConnections.id)),
    ssoDomains: await db
      .select()
      .from(ssoDomains)
      .where(eq(ssoDomains.tenantId, tenantId))
      .orderBy(asc(ssoDomains.domain)),
    ssoSamlAssertions: await db
      .select()
      .from(ssoSamlAssertions)
      .where(eq(ssoSamlAssertions.tenantId, tenantId))
      .orderBy(asc(ssoSamlAssertions.connectionId), asc(ssoSamlAssertions.assertionId)),
    hooks: await db.select().from(hooks).where(eq(hooks.tenantId, tenantId)).orderBy(asc(hooks.id)),
    hookCalls:
      options.audit === false
        ? []
        : await db
            .select()
            .from(hookCallLog)
            .where(eq(hookCallLog.tenantId, tenantId))
            .orderBy(asc(hookCallLog.id)),
    // A delivery worker anywhere on the database (another test's, another instance) moves
    // an endpoint's failing_since and a delivery's progress on its own; what a request
    // changes is the rest.
    webhooks: (
      await db
        .select()
        .from(webhooks)
        .where(eq(webhooks.tenantId, tenantId))
        .orderBy(asc(webhooks.id))
    ).map(({ failingSince: _, ...row }) => row),
    audit:
      options.audit === false
        ? []
        : await db
            .select()
            .from(auditEvents)
            .where(eq(auditEvents.tenantId, tenantId))
            .orderBy(asc(auditEvents.id)),
    // Written with each audit event (the webhook outbox), so left out with them.
    deliveries:
      options.audit === false
        ? []
        : await db
            .select({
              id: webhookDeliveries.id,
              webhookId: webhookDeliveries.webhookId,
              eventId: webhookDeliveries.eventId,
              eventType: webhookDeliveries.eventType,
              payload: webhookDeliveries.payload,
              createdAt: webhookDeliveries.createdAt,
            })
            .from(webhookDeliveries)
            .where(eq(webhookDeliveries.tenantId, tenantId))
            .orderBy(asc(webhookDeliveries.id)),
  }
}

/**
 * Runs `act` and asserts that nothing the given tenants own changed (`tenantSnapshot`);
 * answers what `act` answered. With `sink`, no mail was sent either: the mail an earlier
 * request queued is let land first, and the mail this one might send is waited for.
 */
export async function unchanged<T>(
  server: WithDeps,
  tenantIds: string | string[],
  act: () => Promise<T>,
  options: { sink?: { messages: unknown[] } } = {},
): Promise<T> {
  const ids = typeof tenantIds === 'string' ? [tenantIds] : tenantIds
  const snapshot = () => Promise.all(ids.map((id) => tenantSnapshot(server, id)))
  if (options.sink) await server.deps.mailer.drain()
  const before = await snapshot()
  const mails = options.sink?.messages.length
  const result = await act()
  if (options.sink) await server.deps.mailer.drain()
  assert.deepEqual(await snapshot(), before, 'the request changed nothing')
  if (options.sink) assert.equal(options.sink.messages.length, mails, 'the request sent no mail')
  return result
}

/** A tenant's one-time codes (of one user, if given), oldest first. */
export async function codeRows(server: WithDeps, tenantId: string, userId?: string) {
  return server.deps.db
    .select()
    .from(oneTimeCodes)
    .where(
      and(
        eq(oneTimeCodes.tenantId, tenantId),
        userId ? eq(oneTimeCodes.userId, userId) : undefined,
      ),
    )
    .orderBy(asc(oneTimeCodes.createdAt), asc(oneTimeCodes.id))
}

export type AuditRow = typeof auditEvents.$inferSelect

/** A tenant's audit events (of one action, if given), oldest first. */
export async function auditRows(
  server: WithDeps,
  tenantId: string,
  action?: string,
): Promise<AuditRow[]> {
  const rows = await server.deps.db
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
    .orderBy(asc(auditEvents.createdAt), asc(auditEvents.id))
  return action === undefined ? rows : rows.filter((r) => r.action === action)
}

/** The one audit event of `action` that `match` picks (asserts there is exactly one). */
export async function oneEvent(
  server: WithDeps,
  tenantId: string,
  action: string,
  match: (row: AuditRow) => boolean,
): Promise<AuditRow> {
  const rows = (await auditRows(server, tenantId, action)).filter(match)
  assert.equal(rows.length, 1, `exactly one ${action} event`)
  return rows[0]
}

/** The ids of a tenant's audit events so far; pass it to `auditSince`. */
export async function auditMark(server: WithDeps, tenantId: string): Promise<Set<string>> {
  const rows = await server.deps.db
    .select({ id: auditEvents.id })
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
  return new Set(rows.map((r) => r.id))
}

/**
 * The audit events recorded since `mark`, sorted by action. (Events of one transaction
 * share a timestamp, and the test clock stands still, so their order is not meaningful.)
 */
export async function auditSince(
  server: WithDeps,
  tenantId: string,
  mark: Set<string>,
): Promise<AuditRow[]> {
  const rows = await server.deps.db
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
  return rows
    .filter((r) => !mark.has(r.id))
    .sort((a, b) => a.action.localeCompare(b.action) || a.id.localeCompare(b.id))
}

/** Actions only, sorted: compare with a sorted list of expected actions. */
export async function actionsSince(server: WithDeps, tenantId: string, mark: Set<string>) {
  return (await auditSince(server, tenantId, mark)).map((r) => r.action)
}

export async function userByEmail(server: WithDeps, tenantId: string, email: string) {
  const rows = await server.deps.db
    .select()
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.emailNormalized, normalizeEmail(email))))
    .orderBy(asc(users.createdAt))
  // The latest account with the address (a soft-deleted one may precede it); undefined
  // when there is none.
  return rows[rows.length - 1]
}

/** The user row whatever its state (soft-deleted included), or undefined once purged. */
export async function userRow(server: WithDeps, tenantId: string, userId: string) {
  const rows = await server.deps.db
    .select()
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
  return rows[0]
}

export async function tenantBySlug(server: WithDeps, slug: string) {
  const rows = await server.deps.db.select().from(tenants).where(eq(tenants.slug, slug))
  return rows[0]
}

/** How many users in any tenant have this address (for requests that failed before a tenant existed). */
export async function countUsersWithEmail(server: WithDeps, email: string): Promise<number> {
  const rows = await server.deps.db
    .select({ n: sql<number>`count(*)::int` })
    .from(users)
    .where(eq(users.emailNormalized, normalizeEmail(email)))
  return Number(rows[0].n)
}

/** Changes a user row directly, as an operator or a later feature would. */
export async function setUser(
  server: WithDeps,
  tenantId: string,
  userId: string,
  changes: Partial<typeof users.$inferInsert>,
) {
  await server.deps.db
    .update(users)
    .set(changes)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
}

/** Changes a tenant row directly; the tenant cache of this instance forgets it. */
export async function setTenant(
  server: WithDeps,
  slug: string,
  changes: Partial<typeof tenants.$inferInsert>,
) {
  if (Object.keys(changes).length === 0) return
  await server.deps.db.update(tenants).set(changes).where(eq(tenants.slug, slug))
  server.deps.tenants.forget(slug)
}

export async function sessionRows(server: WithDeps, tenantId: string, userId: string) {
  return server.deps.db
    .select()
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.userId, userId)))
    .orderBy(asc(sessions.createdAt), asc(sessions.id))
}
