// First factor: a passkey assertion (WebAuthn Level 3 §7.2; CONTRACT §9). The credential is
// found by id within the tenant, its try reserved in the failure budgets (CONTRACT §6, §8)
// before anything is checked, the challenge spent (one statement: single use, 5 minutes,
// this tenant, the authentication ceremony, and the address it was asked for), then the
// signature, origin, RP ID and user verification are checked by @simplewebauthn/server and
// the signature counter here. A user-verified passkey is possession and inherence at once,
// so the sign-in asks no second factor whatever the mfaPolicy.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { hashToken } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import {
  findPasskeyByCredentialId,
  type PasskeyRow,
  recordPasskeyUse,
  spendChallenge,
} from '../passkeys/credentials.ts'
import type { AuthenticationCredential } from '../passkeys/schemas.ts'
import {
  checkAssertionShape,
  checkRawId,
  relyingParty,
  signedChallenge,
  userHandleString,
  webauthnLibrary,
} from '../passkeys/webauthn.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById, type User } from '../users/reads.ts'
import { stampLastLogin } from '../users/writes.ts'
import type { FirstFactorProof, Spent } from './pipeline.ts'

type PasskeyDeps = Pick<Deps, 'db' | 'guard' | 'audit' | 'clock' | 'config'>

/**
 * The account key of the failure budgets for a credential no user holds: such tries count
 * per client address (§8) and in one bucket of their own per tenant, never against a user.
 */
const UNKNOWN_CREDENTIAL = '(unknown passkey)'

/** Why a passkey sign-in failed, as UserLoginFailed's metadata.reason records it. */
export type PasskeyRefusal =
  | 'invalid_challenge'
  | 'unknown_credential'
  | 'invalid_assertion'
  | 'account_suspended'
  | 'account_pending'
  | 'passkey_counter'

export interface PasskeyProof extends FirstFactorProof {
  passkeyId: string
  /**
   * Audits the refusal when spending failed in the session's transaction (a parallel
   * sign-in moved the counter first, the user was suspended meanwhile): call it after the
   * rolled-back transaction, as the refusal itself is what is recorded.
   */
  recordRefusal(): Promise<void>
}

/**
 * `account`: a reauthentication of that signed-in user (CONTRACT §16, POST me/reauthenticate)
 * rather than a sign-in: the challenge is of the `reauthentication` ceremony, only the
 * account's own passkeys are accepted, and every try counts against the account.
 */
export async function provePasskey(
  deps: PasskeyDeps,
  tenant: Tenant,
  credential: AuthenticationCredential,
  actor: Actor,
  account?: User,
): Promise<PasskeyProof> {
  // Shape first: a malformed response is a 400 that spends and records nothing.
  const challenge = signedChallenge(credential.response.clientDataJSON)
  await checkAssertionShape(credential.response.authenticatorData)
  checkRawId(credential)
  const found = await findPasskeyByCredentialId(deps.db, tenant.id, credential.id)
  // Another user's passkey proves nothing about the account: it is refused as unknown.
  const passkey = account && found?.userId !== account.id ? undefined : found
  const user = !passkey
    ? undefined
    : (account ?? (await findUserById(deps.db, tenant.id, passkey.userId)))
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email: (account ?? user)?.emailNormalized ?? UNKNOWN_CREDENTIAL,
    ip: actor.ip ?? '',
    factor: 'code',
  })
  const now = deps.clock.now()
  const spent = await spendChallenge(
    deps.db,
    tenant.id,
    hashToken(challenge),
    account ? 'reauthentication' : 'authentication',
    now,
  )

  const refuse = async (reason: PasskeyRefusal): Promise<never> => {
    await recordFailure(deps, tenant, actor, user ?? account, passkey, reason)
    fail(reason === 'account_suspended' ? 'account_suspended' : 'invalid_credentials')
  }
  if (!spent) return refuse('invalid_challenge')
  if (!passkey || !user) return refuse('unknown_credential')
  // A challenge asked for with an email answers only that address's passkeys.
  if (spent.userId !== null && spent.userId !== user.id) return refuse('invalid_challenge')
  const handle = credential.response.userHandle
  if (handle && handle !== userHandleString(user.id)) return refuse('invalid_assertion')

  const rp = relyingParty(deps.config)
  const verified = await (await webauthnLibrary())
    .verifyAuthenticationResponse({
      response: { ...credential, clientExtensionResults: {} },
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      // The counter is compared below, once the signature is known to be good, so that a
      // counter that went backwards is told apart (and audited) from a forgery.
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(passkey.publicKey),
        counter: 0,
        transports: passkey.transports as never,
      },
    })
    .catch(() => undefined)
  if (!verified?.verified) return refuse('invalid_assertion')
  if (user.status === 'Suspended') return refuse('account_suspended')
  if (user.status !== 'Active') return refuse('account_pending')
  // WebAuthn §6.1.1: a counter that does not move forward may mean a cloned authenticator.
  const { newCounter, credentialBackedUp } = verified.authenticationInfo
  if (passkey.signCount > 0 && newCounter <= passkey.signCount) return refuse('passkey_counter')

  let refusal: PasskeyRefusal | undefined
  return {
    user,
    email: user.emailNormalized,
    attempt,
    via: 'passkey',
    passkeyId: passkey.id,
    spend: async (tx) => {
      const use = { counter: newCounter, backedUp: credentialBackedUp, now }
      const result = await spendPasskey(deps, tx, tenant, user, passkey, use)
      if (typeof result !== 'string') return result
      refusal = result
      return fail(result === 'account_suspended' ? 'account_suspended' : 'invalid_credentials')
    },
    recordRefusal: async () => {
      if (refusal) await recordFailure(deps, tenant, actor, user, passkey, refusal)
    },
  }
}

/**
 * In the session's transaction: the counter moves forward only if no parallel sign-in moved
 * it first (one conditional UPDATE), and the login time is stamped on the latest user row,
 * so a suspension that committed meanwhile is seen.
 */
async function spendPasskey(
  deps: PasskeyDeps,
  tx: Handle,
  tenant: Tenant,
  user: User,
  passkey: PasskeyRow,
  use: { counter: number; backedUp: boolean; now: Date },
): Promise<Spent | PasskeyRefusal> {
  const recorded = await recordPasskeyUse(tx, tenant.id, passkey.id, use)
  if (!recorded) return 'passkey_counter'
  const updated = await stampLastLogin(tx, tenant.id, user.id, deps.clock.now())
  if (!updated) return 'unknown_credential'
  if (updated.status !== 'Active') return 'account_suspended'
  return { user: updated, entries: [] }
}

/** UserLoginFailed, outside any transaction (the failure is what is recorded). */
async function recordFailure(
  deps: Pick<Deps, 'audit' | 'db'>,
  tenant: Tenant,
  actor: Actor,
  user: User | undefined,
  passkey: PasskeyRow | undefined,
  reason: PasskeyRefusal,
): Promise<void> {
  const email = user?.emailNormalized
  await deps.audit.record(deps.db, tenant.id, actor, [
    {
      action: 'UserLoginFailed',
      userId: user?.id ?? null,
      email: email ?? null,
      metadata: {
        ...(email ? { email } : {}),
        reason,
        via: 'passkey',
        method: 'passkey',
        ...(passkey && user ? { passkeyId: passkey.id } : {}),
      },
    },
  ])
}
