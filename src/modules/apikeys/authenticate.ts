// API-key authentication (SPEC, Authentication, API keys; CONTRACT §4). A key is looked up
// by its SHA-256 within the tenant of the path: a key of another tenant is simply unknown.
// The lookup is one primary-key-sized read on every request, deliberately uncached, so a
// revocation holds from the next request on, on every instance; the last-use time is
// batched in memory instead (usage.ts).
import type { Deps } from '../../deps.ts'
import { hashToken } from '../../lib/crypto.ts'
import { AppError } from '../../lib/errors.ts'
import type { Tenant } from '../tenants/queries.ts'
import { findKeyByHash } from './queries.ts'

export const KEY_PREFIXES = { live: 'ak_live_', test: 'ak_test_' } as const

export function isApiKey(token: string): boolean {
  return token.startsWith(KEY_PREFIXES.live) || token.startsWith(KEY_PREFIXES.test)
}

/**
 * The live key of this tenant that `token` is, or 401 invalid_api_key. `use` records the
 * use (lastUsedAt); a key that is about to be refused by the route is not used.
 */
export async function authenticateApiKey(
  deps: Pick<Deps, 'db' | 'clock' | 'apiKeyUsage'>,
  tenant: Tenant,
  token: string,
  options: { use: boolean },
) {
  // Our keys are 51 characters; anything far longer is not worth hashing.
  if (token.length > 128) throw new AppError('invalid_api_key')
  const key = await findKeyByHash(deps.db, tenant.id, hashToken(token))
  const now = deps.clock.now()
  if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= now)) {
    throw new AppError('invalid_api_key')
  }
  if (options.use) deps.apiKeyUsage.touch(tenant.id, key.id, now)
  return key
}
