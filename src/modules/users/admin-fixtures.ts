// Fixtures for the administration tests (test-only; nothing in the service imports this).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { and, eq, isNull } from 'drizzle-orm'
import { setUser, tenantSnapshot } from '../../../test/db.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { apiKeys, sessions, users } from '../../db/schema.ts'
import type { Deps } from '../../deps.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'
import { uuidv7 } from '../../lib/ids.ts'

type WithDeps = { deps: Deps }

/**
 * Stores an API key the way POST api-keys does (only its SHA-256), and answers the
 * plaintext, so admin routes can be tried with a key.
 */
export async function insertApiKey(
  server: WithDeps,
  tenantId: string,
  options: { environment?: 'live' | 'test'; revokedAt?: Date; expiresAt?: Date } = {},
): Promise<string> {
  const environment = options.environment ?? 'live'
  const plaintext = `ak_${environment}_${randomToken()}`
  await server.deps.db.insert(apiKeys).values({
    tenantId,
    id: randomUUID(),
    name: 'test key',
    environment,
    prefix: plaintext.slice(0, 12),
    keyHash: hashToken(plaintext),
    createdAt: new Date(),
    expiresAt: options.expiresAt ?? null,
    revokedAt: options.revokedAt ?? null,
  })
  return plaintext
}

/** The user row whatever its state (soft-deleted included), or undefined once purged. */
export async function userRow(server: WithDeps, tenantId: string, userId: string) {
  const rows = await server.deps.db
    .select()
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
  return rows[0]
}

export const PUBLIC_USER_FIELDS = [
  'createdAt',
  'email',
  'emailVerified',
  'id',
  'lastLoginAt',
  'role',
  'status',
  'tenantId',
  'totpEnrolled',
]

/** Requests and database checks shared by the users-admin-*.test.ts files. */
export function usersAdmin(server: TestServer) {
  async function setup() {
    const t = await createTenant(server)
    // The test clock stands still: a second apart, the list order is the creation order.
    server.clock.advance(1)
    const member = await signup(server, t.slug)
    return {
      t,
      admin: t.admin.accessToken as string,
      adminId: t.admin.user.id as string,
      member,
    }
  }

  const list = (t: TenantFixture, query: string, token?: string) =>
    server.request('GET', `/v1/${t.slug}/users${query}`, undefined, { token })
  const del = (t: TenantFixture, userId: string, token?: string) =>
    server.request('DELETE', `/v1/${t.slug}/users/${userId}`, undefined, { token })
  const patch = (t: TenantFixture, userId: string, body: unknown, token?: string) =>
    server.request('PATCH', `/v1/${t.slug}/users/${userId}`, body, { token })
  const resetTotp = (t: TenantFixture, userId: string, token?: string) =>
    server.request('POST', `/v1/${t.slug}/users/${userId}/totp/disable`, undefined, { token })
  const me = (t: TenantFixture, token: string) =>
    server.request('GET', `/v1/${t.slug}/me`, undefined, { token })
  const login = (t: TenantFixture, email: string, password = STRONG_PASSWORD) =>
    server.request('POST', `/v1/${t.slug}/auth/login`, { email, password })

  /** Runs `attempt`, asserting that nothing the given tenants own changed. */
  async function unchanged(tenantIds: string[], attempt: () => Promise<void>) {
    const before = await Promise.all(tenantIds.map((id) => tenantSnapshot(server, id)))
    await attempt()
    const after = await Promise.all(tenantIds.map((id) => tenantSnapshot(server, id)))
    assert.deepEqual(after, before, 'the request changed nothing')
  }

  async function activeAdmins(tenantId: string) {
    const rows = await server.deps.db
      .select({ id: users.id })
      .from(users)
      .where(
        and(
          eq(users.tenantId, tenantId),
          eq(users.role, 'Admin'),
          eq(users.status, 'Active'),
          isNull(users.deletedAt),
        ),
      )
    return rows.map((r) => r.id)
  }

  async function liveSessions(tenantId: string, userId: string) {
    const rows = await server.deps.db
      .select()
      .from(sessions)
      .where(
        and(
          eq(sessions.tenantId, tenantId),
          eq(sessions.userId, userId),
          isNull(sessions.revokedAt),
        ),
      )
    return rows.length
  }

  /** Inserts `count` members directly (no password hashing), each a second apart. */
  async function insertMembers(tenantId: string, count: number) {
    const start = server.clock.now().getTime()
    const rows = Array.from({ length: count }, (_, i) => {
      const at = new Date(start + i * 1000)
      const email = uniqueEmail('bulk')
      return {
        tenantId,
        id: uuidv7(at.getTime()),
        email,
        emailNormalized: email,
        passwordHash: null,
        status: 'Active',
        role: 'Member',
        createdAt: at,
        updatedAt: at,
      }
    })
    await server.deps.db.insert(users).values(rows)
    return rows.map((r) => r.id)
  }

  async function enrolTotp(tenantId: string, userId: string) {
    await setUser(server, tenantId, userId, {
      totpSecretEnc: server.deps.cipher.encrypt('JBSWY3DPEHPK3PXP', `totp:${userId}`),
      totpEnabled: true,
      totpLastStep: 1234,
    })
  }

  return {
    setup,
    list,
    del,
    patch,
    resetTotp,
    me,
    login,
    unchanged,
    activeAdmins,
    liveSessions,
    insertMembers,
    enrolTotp,
  }
}
