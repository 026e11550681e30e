// The single-use OAuth states of every sign-in through an outside provider (CONTRACT §7,
// §12, §19): the SPEC's idp (federation/idp/service.ts), the SSO connections' OIDC sign-ins
// (federation/oidc-signin.ts) and the social connections' (federation/social/signin.ts) make
// and spend their authorization requests' states here, one implementation of state, PKCE
// (S256) and nonce: a state is random, kept hashed, good for ten minutes and once, bound to
// its tenant and to the connection it was made for (none for the idp), its PKCE verifier
// sealed under ENCRYPTION_KEYS with the caller's AAD. Pending second factors
// (federation/pending-mfa.ts) keep theirs in the same table through the queries re-exported
// below: federation/queries.ts's own statements (a state is spent in one UPDATE), on the
// handle (a transaction too) the caller passes. No file outside federation/ imports
// queries.ts (test/layout.test.ts checks).
import type { Deps } from '../../deps.ts'
import { hashToken } from '../../lib/crypto.ts'
import { deleteStaleStates, insertState, spendState } from './queries.ts'

export { deleteStaleStates, findLiveState, insertState, spendState } from './queries.ts'

/** CONTRACT §7: a state is good for ten minutes, once. */
export const STATE_TTL = 10 * 60

type StateDeps = Pick<Deps, 'cipher' | 'clock' | 'db'>

/** What an authorization request carries of its state. */
export interface Authorization {
  state: string
  nonce: string
  /** The PKCE S256 challenge of the sealed verifier. */
  codeChallenge: string
}

/**
 * A new state of the tenant, for `connectionId` (undefined: the SPEC's idp), its verifier
 * sealed with `aad`. Expired states of the tenant are swept first.
 */
export async function beginAuthorization(
  deps: StateDeps,
  tenantId: string,
  connectionId: string | undefined,
  aad: string,
): Promise<Authorization> {
  const lib = await import('openid-client')
  const state = lib.randomState()
  const nonce = lib.randomNonce()
  const verifier = lib.randomPKCECodeVerifier()
  const now = deps.clock.now()
  await deleteStaleStates(deps.db, tenantId, now, STATE_TTL)
  await insertState(
    deps.db,
    {
      tenantId,
      connectionId,
      stateHash: hashToken(state),
      codeVerifier: deps.cipher.encrypt(verifier, aad),
      nonce,
      now,
    },
    STATE_TTL,
  )
  return { state, nonce, codeChallenge: await lib.calculatePKCECodeChallenge(verifier) }
}

/**
 * Spends `state` of the tenant made for `connectionId` (null: the SPEC's idp): its PKCE
 * verifier and nonce, or undefined when it is no live state of theirs (unknown, used,
 * expired, another tenant's or connection's) or its verifier cannot be opened (sealed under
 * a key since removed from ENCRYPTION_KEYS, or with another AAD): no state either way.
 */
export async function spendAuthorization(
  deps: StateDeps,
  tenantId: string,
  connectionId: string | null,
  aad: string,
  state: string,
): Promise<{ codeVerifier: string; nonce: string } | undefined> {
  const row = await spendState(deps.db, tenantId, hashToken(state), deps.clock.now(), connectionId)
  if (!row) return undefined
  try {
    return { codeVerifier: deps.cipher.decrypt(row.codeVerifier, aad), nonce: row.nonce }
  } catch {
    return undefined
  }
}

/**
 * The callback's URL as openid-client checks it: the redirect URI with the answer's `code`
 * and `state`, and its `iss` (RFC 9207, against mix-up attacks) where the provider is an
 * OpenID one whose issuer is known.
 */
export function callbackUrl(
  redirectUri: string,
  query: { code: string; state: string; iss?: string },
  withIssuer: boolean,
): URL {
  const url = new URL(redirectUri)
  url.searchParams.set('code', query.code)
  url.searchParams.set('state', query.state)
  if (withIssuer && query.iss) url.searchParams.set('iss', query.iss)
  return url
}
