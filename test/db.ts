// Reading the database behind the HTTP API, so a test can prove that a refused request
// changed nothing, and see exactly which audit events a request recorded.
import { and, asc, eq, sql } from 'drizzle-orm'
import { auditEvents, refreshTokens, sessions, tenants, users } from '../src/db/schema.ts'
import type { Deps } from '../src/deps.ts'
import { normalizeEmail } from '../src/lib/email.ts'

type WithDeps = { deps: Deps }

/** Every row a tenant owns in the foundation's tables, in a stable order. */
export async function tenantSnapshot(server: WithDeps, tenantId: string) {
  const db = server.deps.db
  const tenant = await db.select().from(tenants).where(eq(tenants.id, tenantId))
  const userRows = await db
    .select()
    .from(users)
    .where(eq(users.tenantId, tenantId))
    .orderBy(asc(users.id))
  const sessionRows = await db
    .select()
    .from(sessions)
    .where(eq(sessions.tenantId, tenantId))
    .orderBy(asc(sessions.id))
  const tokenRows = await db
    .select()
    .from(refreshTokens)
    .where(eq(refreshTokens.tenantId, tenantId))
    .orderBy(asc(refreshTokens.tokenHash))
  const auditRows = await db
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
    .orderBy(asc(auditEvents.id))
  return { tenant, users: userRows, sessions: sessionRows, tokens: tokenRows, audit: auditRows }
}

export type AuditRow = typeof auditEvents.$inferSelect

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
  return rows.at(-1)
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
