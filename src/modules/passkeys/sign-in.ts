// Passkey sign-in (CONTRACT §9): POST auth/passkey/options, then auth/passkey/verify, which
// proves the first factor (signin/passkey.ts) and opens the session through the sign-in
// pipeline (signin/pipeline.ts) with no second factor.
//
// No enumeration (CONTRACT §16): with an email, the options list exactly LISTED_CREDENTIALS
// credential ids for every address: its own passkeys first (all of them when it has more),
// then decoys. A decoy is shaped like the tenant's newest real credential (its id's length
// and its transports; a platform passkey's shape while the tenant has none) and derived
// (HMAC under a key from ENCRYPTION_KEYS) from the tenant, the address and its slot, so
// asking twice answers the same ids, two addresses never share one, and an unknown address,
// a user without passkeys (password-only, suspended) and a deleted user look alike. The
// statements run are the same too (the passkey lookup runs against an id that matches nothing).
import { createHmac, hkdfSync, randomUUID } from 'node:crypto'
import type { Config } from '../../config.ts'
import type { Deps } from '../../deps.ts'
import { subKey } from '../../lib/crypto.ts'
import { normalizeEmail } from '../../lib/email.ts'
import type { Actor } from '../audit/recorder.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { provePasskey } from '../signin/passkey.ts'
import { completeSignIn } from '../signin/pipeline.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail } from '../users/reads.ts'
import { type CredentialShape, listPasskeys, newestCredentialShape } from './queries.ts'
import type { AuthenticationCredential } from './schemas.ts'
import { issueChallenge, requirePasskeys } from './service.ts'
import { CHALLENGE_TTL_SECONDS, relyingParty, webauthnLibrary } from './webauthn.ts'

/** POST auth/passkey/options. */
export async function signInOptions(
  deps: Pick<Deps, 'clock' | 'config' | 'db'>,
  tenant: Tenant,
  rawEmail: string | undefined,
) {
  requirePasskeys(tenant)
  let allowCredentials: Descriptor[] = []
  let boundTo: string | null = null
  if (rawEmail !== undefined) {
    const email = normalizeEmail(rawEmail)
    const user = await findUserByEmail(deps.db, tenant.id, email)
    // An unknown address binds the challenge to an id no user has: nothing can use it.
    boundTo = user?.id ?? randomUUID()
    const held = await listPasskeys(deps.db, tenant.id, boundTo)
    const shape = await newestCredentialShape(deps.db, tenant.id)
    allowCredentials = held.map((p) => ({ id: p.credentialId, transports: p.transports }))
    for (let slot = held.length; slot < LISTED_CREDENTIALS; slot++) {
      allowCredentials.push(decoy(deps.config, tenant.id, email, slot, shape))
    }
  }
  const challenge = await issueChallenge(deps, tenant.id, 'authentication', boundTo)
  const options = await (await webauthnLibrary()).generateAuthenticationOptions({
    rpID: relyingParty(deps.config).id,
    allowCredentials: allowCredentials as never,
    challenge,
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    userVerification: 'required',
  })
  return { ...options, allowCredentials: options.allowCredentials ?? [] }
}

/** How many credential ids the options list for any address (CONTRACT §16). */
export const LISTED_CREDENTIALS = 3

/**
 * The decoys' shape while the tenant has no passkey: a platform passkey's, as Chromium's
 * virtual platform authenticator makes them (32 random bytes, transport `internal`).
 */
const PLATFORM_SHAPE: CredentialShape = { bytes: 32, transports: ['internal'] }

interface Descriptor {
  id: string
  transports?: string[]
}

/**
 * The credential id that stands in, in `slot`, for a passkey the address does not have:
 * HMAC-SHA-256 of the tenant and the address under a key derived from the first
 * ENCRYPTION_KEYS entry, expanded by HKDF to the shape's length for that slot.
 */
function decoy(
  config: Pick<Config, 'encryptionKeys'>,
  tenantId: string,
  email: string,
  slot: number,
  shape: CredentialShape | undefined,
): Descriptor {
  const { bytes, transports } = shape ?? PLATFORM_SHAPE
  const key = subKey(config.encryptionKeys[0].key, 'passkey-decoy-credential')
  const mac = createHmac('sha256', key).update(`${tenantId}:${email}`, 'utf8').digest()
  const id = Buffer.from(hkdfSync('sha256', mac, Buffer.alloc(0), `slot ${slot}`, bytes))
  return { id: id.toString('base64url'), transports: [...transports] }
}

/** POST auth/passkey/verify. */
export async function signInWithPasskey(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'guard' | 'sessions'>,
  tenant: Tenant,
  credential: AuthenticationCredential,
  actor: Actor,
): Promise<TokenEnvelope> {
  requirePasskeys(tenant)
  const proof = await provePasskey(deps, tenant, credential, actor)
  try {
    // The passkey was user-verified: no second factor, whatever the mfaPolicy.
    return await completeSignIn(deps, tenant, proof, async () => undefined, actor, {
      login: { method: 'passkey', passkeyId: proof.passkeyId },
    })
  } catch (error) {
    await proof.recordRefusal()
    throw error
  }
}
