// The queries of the api_keys table; no other file writes it. Every query names the
// tenant; a key is found by the SHA-256 of its plaintext, never by the plaintext.

import type { Db, Handle } from '../../db/client.ts'
import { and, desc, eq, isNull, sql } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { namedStatement } from '../../db/prepared.ts'
import { apiKeys } from '../../db/schema.ts'

export type ApiKey = typeof apiKeys.$inferSelect
export type NewApiKey = typeof apiKeys.$inferInsert

export async function insertApiKey(db: Handle, key: NewApiKey): Promise<ApiKey> {
  const rows = await db.insert(apiKeys).values(key).returning()
  return rows[0]
}

const byHash = namedStatement(
  'api_key_by_hash',
  'SELECT id, expires_at, revoked_at, permissions FROM api_keys WHERE tenant_id = $1 AND key_hash = $2',
)

/**
 * What authentication needs to know about a presented key (unique index
 * api_keys_tenant_hash): a raw named statement, as it runs on every API-key request.
 */
export async function findKeyByHash(
  db: Db,
  tenantId: string,
  keyHash: string,
): Promise<Pick<ApiKey, 'id' | 'expiresAt' | 'revokedAt' | 'permissions'> | undefined> {
  const [row] = await byHash(db, [tenantId, keyHash])
  return row
    ? {
        id: row.id as string,
        expiresAt: row.expires_at as Date | null,
        revokedAt: row.revoked_at as Date | null,
        permissions: row.permissions as string[] | null,
      }
    : undefined
}

/** Newest first; `after` is the id of the last key of the page before. */
export async function listApiKeys(
  db: Handle,
  tenantId: string,
  options: { limit: number; includeRevoked: boolean; after?: string },
): Promise<ApiKey[]> {
  const { after } = options
  return db
    .select()
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.tenantId, tenantId),
        options.includeRevoked ? undefined : isNull(apiKeys.revokedAt),
        after
          ? sql`(${apiKeys.createdAt}, ${apiKeys.id}) < (
              SELECT c.created_at, c.id FROM api_keys c WHERE c.tenant_id = ${tenantId} AND c.id = ${after})`
          : undefined,
      ),
    )
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .limit(options.limit)
}

export function findApiKey(db: Handle, tenantId: string, id: string): Promise<ApiKey | undefined> {
  return findOwned(db, apiKeys, tenantId, id)
}

/** Revokes a live key in one statement; answers it, or undefined when it was not live. */
export async function revokeApiKey(db: Handle, tenantId: string, id: string, now: Date) {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning()
  return rows[0] as ApiKey | undefined
}

export interface KeyUse {
  tenantId: string
  keyId: string
  at: Date
}

/** Writes batched last-use times in one statement; a time never moves backwards. */
export async function recordKeyUses(db: Handle, uses: KeyUse[]): Promise<void> {
  if (uses.length === 0) return
  const values = sql.join(
    uses.map(
      (u) => sql`(${u.tenantId}::uuid, ${u.keyId}::uuid, ${u.at.toISOString()}::timestamptz)`,
    ),
    sql`, `,
  )
  await db.execute(sql`
    UPDATE api_keys k SET last_used_at = v.at
    FROM (VALUES ${values}) AS v (tenant_id, id, at)
    WHERE k.tenant_id = v.tenant_id AND k.id = v.id
      AND (k.last_used_at IS NULL OR k.last_used_at < v.at)
  `)
}
