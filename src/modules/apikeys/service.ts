// API keys (SPEC, API key state table; CONTRACT §2 and §4): created active, revoked
// explicitly, stored as a SHA-256 of 256 random bits, shown in plaintext once.
import type { Deps } from '../../deps.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { Actor } from '../audit/recorder.ts'
import { holdsAll, isPermission, type Permission } from '../roles/permissions.ts'
import { KEY_PREFIXES, keyPermissions } from './authenticate.ts'
import * as store from './queries.ts'
import type { ApiKeyRecord, CreateApiKeyBody, ListApiKeysQuery } from './schemas.ts'

/** The record as responses show it (the test fixtures name it so). */
export type ApiKeyView = ApiKeyRecord

export function presentApiKey(deps: Pick<Deps, 'apiKeyUsage'>, key: store.ApiKey): ApiKeyRecord {
  // This instance's uses not yet written count too (usage.ts).
  const unwritten = deps.apiKeyUsage.unwritten(key.tenantId, key.id)
  const lastUsed =
    unwritten && (!key.lastUsedAt || unwritten > key.lastUsedAt) ? unwritten : key.lastUsedAt
  return {
    id: key.id,
    name: key.name,
    environment: key.environment as 'live' | 'test',
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: lastUsed?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    permissions: [...keyPermissions(key.permissions)],
  }
}

export async function createApiKey(
  deps: Pick<Deps, 'apiKeyUsage' | 'audit' | 'clock' | 'db'>,
  tenantId: string,
  input: CreateApiKeyBody,
  actor: Actor,
  creatorPermissions: readonly Permission[],
) {
  const now = deps.clock.now()
  const permissions = keyPermissionsAsked(input.permissions, creatorPermissions)
  const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt)
  if (expiresAt && expiresAt <= now) {
    throw new AppError('validation', {
      details: { issues: [{ path: 'body.expiresAt', message: 'must be in the future' }] },
    })
  }
  const plaintext = KEY_PREFIXES[input.environment] + randomToken(32)
  const key = await deps.db.transaction(async (tx) => {
    const row = await store.insertApiKey(tx, {
      tenantId,
      id: uuidv7(now.getTime()),
      name: input.name,
      environment: input.environment,
      prefix: plaintext.slice(0, 12),
      keyHash: hashToken(plaintext),
      permissions,
      createdBy: actor.id,
      createdAt: now,
      expiresAt,
    })
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApiKeyCreated',
        metadata: {
          apiKeyId: row.id,
          name: row.name,
          environment: row.environment,
          prefix: row.prefix,
          expiresAt: expiresAt?.toISOString() ?? null,
          permissions,
        },
      },
    ])
    return row
  })
  return { plaintext, apiKey: presentApiKey(deps, key) }
}

/**
 * The permissions a new key is to hold (CONTRACT §17): those asked, each of the catalogue
 * (else 400 validation naming it) and held by the creator (else 403 permission_required
 * naming the first not held), or by default every one the creator holds. Sorted, each once.
 */
function keyPermissionsAsked(
  asked: string[] | undefined,
  creator: readonly Permission[],
): Permission[] {
  if (asked === undefined) return [...creator].sort()
  for (const [i, name] of asked.entries()) {
    if (!isPermission(name)) {
      throw new AppError('validation', {
        details: {
          issues: [{ path: `body.permissions.${i}`, message: `unknown permission ${name}` }],
        },
      })
    }
  }
  const missing = asked.find((name) => !holdsAll(creator, [name]))
  if (missing) throw new AppError('permission_required', { details: { permission: missing } })
  return [...new Set(asked as Permission[])].sort()
}

export async function listApiKeyPage(
  deps: Pick<Deps, 'apiKeyUsage' | 'db'>,
  tenantId: string,
  query: ListApiKeysQuery,
) {
  return readPage(
    query,
    ({ limit, after }) =>
      store.listApiKeys(deps.db, tenantId, { limit, after, includeRevoked: query.includeRevoked }),
    (k) => presentApiKey(deps, k),
  )
}

/**
 * Revokes a key; the next request with it is refused, on every instance: once the
 * revocation committed, the tenant's key epoch moves on before the answer (cache.ts).
 * Revoking a revoked key changes nothing and answers ok; an unknown or foreign id is 404.
 */
export async function revokeApiKey(
  deps: Pick<Deps, 'apiKeys' | 'audit' | 'clock' | 'db'>,
  tenantId: string,
  id: string,
  actor: Actor,
) {
  if (!isUuid(id)) fail('not_found')
  const revoked = await deps.db.transaction(async (tx) => {
    const key = await store.revokeApiKey(tx, tenantId, id, deps.clock.now())
    if (!key) {
      if (!(await store.findApiKey(tx, tenantId, id))) fail('not_found')
      return false
    }
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApiKeyRevoked',
        metadata: { apiKeyId: key.id, name: key.name, prefix: key.prefix },
      },
    ])
    return true
  })
  // Committed: no instance may accept the key from here on. Should Redis not take the bump,
  // the revocation stands (it is in the database) and kept copies expire within seconds.
  if (revoked) await deps.apiKeys.revoked(tenantId, id).catch(() => {})
}
