// Fixtures for the API-key, invitation and audit tests (test-only; nothing in the service
// imports this file).
import assert from 'node:assert/strict'
import { asc, eq } from 'drizzle-orm'
import type { TestServer } from '../../../test/helpers.ts'
import { signup } from '../../../test/helpers.ts'
import { apiKeys, auditEvents, invites, sessions, users } from '../../db/schema.ts'
import type { Deps } from '../../deps.ts'
import type { ApiKeyView } from './service.ts'

type WithDeps = { deps: Deps }

/**
 * Every row a tenant owns in the tables these features touch, in a stable order: equal
 * snapshots before and after a refused request prove it changed nothing.
 */
export async function adminSnapshot(server: WithDeps, tenantId: string) {
  const db = server.deps.db
  const keys = await db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.tenantId, tenantId))
    .orderBy(asc(apiKeys.id))
  return {
    // lastUsedAt is left out: it is written by a timer (usage.ts) and records a successful
    // key authentication, which a request refused later (403 on api-keys) still was.
    apiKeys: keys.map(({ lastUsedAt: _, ...rest }) => rest),
    invites: await db
      .select()
      .from(invites)
      .where(eq(invites.tenantId, tenantId))
      .orderBy(asc(invites.id)),
    users: await db.select().from(users).where(eq(users.tenantId, tenantId)).orderBy(asc(users.id)),
    sessions: await db
      .select()
      .from(sessions)
      .where(eq(sessions.tenantId, tenantId))
      .orderBy(asc(sessions.id)),
    audit: await db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.tenantId, tenantId))
      .orderBy(asc(auditEvents.id)),
  }
}

/** Runs `act` and asserts that the tenant's rows are exactly as before. */
export async function unchanged<T>(
  server: WithDeps,
  tenantId: string,
  act: () => Promise<T>,
): Promise<T> {
  const before = await adminSnapshot(server, tenantId)
  const result = await act()
  assert.deepEqual(await adminSnapshot(server, tenantId), before, 'nothing changed')
  return result
}

/** A signed-up Member of the tenant: its access token. */
export async function memberToken(server: Pick<TestServer, 'request'>, slug: string) {
  const member = await signup(server, slug)
  return member.accessToken as string
}

/** Creates an API key through the API with the admin's token; answers the plaintext and record. */
export async function createKey(
  server: Pick<TestServer, 'request'>,
  slug: string,
  adminToken: string,
  body: Record<string, unknown> = { name: 'backend', environment: 'live' },
) {
  const res = await server.request('POST', `/v1/${slug}/api-keys`, body, { token: adminToken })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { plaintext: string; apiKey: ApiKeyView }
}

/** The audit rows of a tenant with a given action, oldest first. */
export async function auditRows(server: WithDeps, tenantId: string, action: string) {
  const rows = await server.deps.db
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
    .orderBy(asc(auditEvents.createdAt), asc(auditEvents.id))
  return rows.filter((r) => r.action === action)
}

type AuditRow = typeof auditEvents.$inferSelect

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
