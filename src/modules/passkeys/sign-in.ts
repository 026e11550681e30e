// Passkey sign-in (CONTRACT §9): POST auth/passkey/options, then auth/passkey/verify, which
// proves the first factor (signin/passkey.ts) and opens the session through the sign-in
// pipeline (signin/pipeline.ts) with no second factor.
//
// No enumeration: with an email, the options list that address's passkeys; an unknown
// address, and a user without passkeys, get one decoy credential id instead, derived
// (HMAC) from the tenant and the address under a server key, so asking twice answers the
// same decoy and the answer has the same shape either way. The statements run are the same
// too (the passkey lookup runs against an id that matches nothing).
import { createHmac, hkdfSync, randomUUID } from 'node:crypto'
import type { Config } from '../../config.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import type { Actor } from '../audit/recorder.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { provePasskey } from '../signin/passkey.ts'
import { completeSignIn } from '../signin/pipeline.ts'
import type { Tenant } from '../tenants/queries.ts'
import { findUserByEmail } from '../users/queries.ts'
import { listPasskeys } from './queries.ts'
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
  let allowCredentials: { id: string; transports?: string[] }[] = []
  let boundTo: string | null = null
  if (rawEmail !== undefined) {
    const email = normalizeEmail(rawEmail)
    const user = await findUserByEmail(deps.db, tenant.id, email)
    // An unknown address binds the challenge to an id no user has: nothing can use it.
    boundTo = user?.id ?? randomUUID()
    const held = await listPasskeys(deps.db, tenant.id, boundTo)
    allowCredentials = held.length
      ? held.map((p) => ({ id: p.credentialId, transports: p.transports }))
      : [decoy(deps.config, tenant.id, email)]
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

const decoyKeys = new WeakMap<Buffer, Buffer>()

/** A credential id that stands in for an address without passkeys (16 bytes, stable). */
function decoy(config: Pick<Config, 'encryptionKeys'>, tenantId: string, email: string) {
  const secret = config.encryptionKeys[0].key
  let key = decoyKeys.get(secret)
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'passkey-decoy-credential', 32))
    decoyKeys.set(secret, key)
  }
  const mac = createHmac('sha256', key).update(`${tenantId}:${email}`, 'utf8').digest()
  return { id: mac.subarray(0, 16).toString('base64url'), transports: ['hybrid', 'internal'] }
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
