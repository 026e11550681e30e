// MFA recovery codes (CONTRACT §9): ten single-use codes `xxxxx-xxxxx` (lowercase
// base32, 50 random bits each) that stand in for a TOTP code when the authenticator is
// lost. They are shown once, when TOTP is activated or the codes are regenerated, and
// stored only as keyed hashes.
//
// Storage follows the emailed codes (codes/service.ts): HMAC-SHA256 under a key derived
// with HKDF-SHA256 (RFC 5869) from the current ENCRYPTION_KEYS entry, over the owner
// (tenant, user) and the normalised code, stored as `<key version>:<base64url mac>`.
// Without the key the table reveals nothing, a row copied to another user never matches,
// and every listed key version is tried, so codes made before a key rotation still work.
import { createHmac, randomInt } from 'node:crypto'
import type { EncryptionKey } from '../../config.ts'
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { subKey } from '../../lib/crypto.ts'
import * as store from './queries.ts'

// The recovery-code rows other modules check, spend and remove (issue 36, Structure): the
// sign-in's recovery-code factor (signin/recovery-code.ts) and an admin's TOTP reset
// (users/admin-service.ts). queries.ts's own statements, re-exported, on the handle (a
// transaction too) the caller passes; no file outside mfa/ imports queries.ts.
export { deleteRecoveryCodes, hasUnspentCode, spendRecoveryCode } from './queries.ts'

export const RECOVERY_CODE_COUNT = 10
const GROUP = 5
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'
const NORMALISED = /^[a-z2-7]{10}$/

/** Ten new codes `xxxxx-xxxxx`, each character from crypto random (5 bits). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let out = ''
    for (let i = 0; i < 2 * GROUP; i++) out += BASE32[randomInt(32)]
    return `${out.slice(0, GROUP)}-${out.slice(GROUP)}`
  })
}

/**
 * A code as typed, compared case-insensitively with the hyphen and spaces optional: the
 * ten characters in lower case, or undefined when it cannot be a code at all.
 */
export function normaliseRecoveryCode(input: string): string | undefined {
  const compact = input.replace(/[\s-]+/g, '').toLowerCase()
  return NORMALISED.test(compact) ? compact : undefined
}

function mac(key: EncryptionKey, tenantId: string, userId: string, normalised: string) {
  const digest = createHmac('sha256', subKey(key.key, 'recovery-code-hmac'))
    .update(`recovery:${tenantId}:${userId}:${normalised}`, 'utf8')
    .digest('base64url')
  return `${key.version}:${digest}`
}

/** Every stored form a typed code may have (one per key version); none for garbage. */
export function recoveryCodeCandidates(
  keys: EncryptionKey[],
  tenantId: string,
  userId: string,
  input: string,
): string[] {
  const normalised = normaliseRecoveryCode(input)
  return normalised === undefined ? [] : keys.map((k) => mac(k, tenantId, userId, normalised))
}

/**
 * Replaces the user's codes with ten new ones inside the caller's transaction (the old
 * ones, spent or not, are void) and answers them: the only time they are readable.
 */
export async function replaceRecoveryCodes(
  deps: Pick<Deps, 'clock' | 'config'>,
  tx: Handle,
  tenantId: string,
  userId: string,
): Promise<string[]> {
  const codes = newRecoveryCodes()
  const [current] = deps.config.encryptionKeys
  const hashes = codes.map((c) => mac(current, tenantId, userId, c.replace('-', '')))
  await store.deleteRecoveryCodes(tx, tenantId, userId)
  await store.insertRecoveryCodes(tx, tenantId, userId, hashes, deps.clock.now())
  return codes
}
