// API-key authentication (SPEC, Authentication, API keys; CONTRACT §4). A key is looked up
// by its SHA-256 within the tenant of the path: a key of another tenant is simply unknown.
// A live key is kept in process once read (cache.ts), and counts only while its tenant's
// key epoch in Redis is unchanged, so a revocation holds from the next request on, on every
// instance; without Redis every request reads the key. The last-use time is batched in
// memory (usage.ts).
import type { Deps } from '../../deps.ts'
import { hashToken } from '../../lib/crypto.ts'
import { AppError } from '../../lib/errors.ts'
import { ALL_PERMISSIONS, isPermission, type Permission } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { KnownKey } from './cache.ts'
import { findKeyByHash } from './queries.ts'

/**
 * A key's stored permissions as the checks read them: the catalogue's only, sorted; a key
 * from before keys had permissions (null) holds every one, as it did then.
 */
export function keyPermissions(stored: readonly string[] | null): readonly Permission[] {
  if (stored === null) return ALL_PERMISSIONS
  return Object.freeze([...new Set(stored.filter(isPermission))].sort())
}

export const KEY_PREFIXES = { live: 'ak_live_', test: 'ak_test_' } as const

export function isApiKey(token: string): boolean {
  return token.startsWith(KEY_PREFIXES.live) || token.startsWith(KEY_PREFIXES.test)
}

type KeyDeps = Pick<Deps, 'db' | 'clock' | 'apiKeyUsage' | 'apiKeys'>

/**
 * The live key of this tenant that `token` is, or 401 invalid_api_key. `use` records the
 * use (lastUsedAt); a key that is about to be refused by the route is not used. `alongside`
 * (the request's rate-limit point) runs for the key found; for a kept key it runs together
 * with the epoch's read (both in flight at once), and a refused key still answers 401 first.
 */
export async function authenticateApiKey(
  deps: KeyDeps,
  tenant: Tenant,
  token: string,
  options: { use: boolean; alongside?: (keyId: string) => Promise<void> },
): Promise<KnownKey> {
  // Our keys are 51 characters; anything far longer is not worth hashing.
  if (token.length > 128) throw new AppError('invalid_api_key')
  const keyHash = hashToken(token)
  const cache = deps.apiKeys
  const kept = cache.peek(tenant.id, keyHash)
  let key: KnownKey | undefined
  let alongside: Promise<void> | undefined
  let epoch: string | undefined
  if (kept) {
    alongside = options.alongside?.(kept.id)
    // Handled here too: should the database read below fail, its refusal is not unhandled.
    alongside?.catch(() => {})
    epoch = await cache.epoch(tenant.id)
    if (epoch === kept.epoch) key = kept
  } else if (cache.enabled) {
    epoch = await cache.epoch(tenant.id)
  }
  if (!key) {
    const row = await findKeyByHash(deps.db, tenant.id, keyHash)
    if (row && !row.revokedAt) {
      key = { id: row.id, expiresAt: row.expiresAt, permissions: keyPermissions(row.permissions) }
      if (epoch !== undefined) cache.store(tenant.id, keyHash, key, epoch)
    }
  }
  const now = deps.clock.now()
  if (!key || (key.expiresAt && key.expiresAt <= now)) {
    // The point taken beside a kept key that turned out revoked is not the answer: 401 is.
    throw new AppError('invalid_api_key')
  }
  await (alongside ?? options.alongside?.(key.id))
  if (options.use) deps.apiKeyUsage.touch(tenant.id, key.id, now)
  return key
}
