// Sign in with Apple's own rules (CONTRACT §19), beside the OpenID Connect code the other
// presets share:
// - The client secret is not a stored string but an ES256 JWT the service signs with the
//   connection's private key ("Creating a client secret",
//   https://developer.apple.com/documentation/accountorganizationaldatasharing/creating-a-client-secret):
//   header `kid` the Key ID, claims `iss` the Team ID, `sub` the client id (the Services ID),
//   `aud` https://appleid.apple.com, `iat`, and `exp` at most 180 days later. One is minted
//   for a day and minted again when less than an hour of it is left, so a token request
//   never carries one about to expire.
// - The name comes only in the first callback's `user` form field
//   (https://developer.apple.com/documentation/signinwithapple/request-an-authorization-to-the-sign-in-with-apple-server),
//   `{"name": {"firstName", "lastName"}, "email"}`, which nothing signs: it names a new
//   account and is trusted for nothing else.
// - A private-relay address (`…@privaterelay.appleid.com`) is one Apple made and forwards,
//   so it counts as verified; Apple's `email_verified` may be the string "true".
import { createPrivateKey } from 'node:crypto'
import { importPKCS8, SignJWT } from 'jose'
import { socialConnections } from '../../../db/schema.ts'
import { sealedColumn } from '../../../db/sealed-column.ts'
import type { Clock } from '../../../lib/clock.ts'
import type { FieldCipher } from '../../../lib/crypto.ts'
import { claimsVerified } from '../../../lib/email.ts'
import { oidcProfile, type Profile } from './presets.ts'

export const APPLE_AUDIENCE = 'https://appleid.apple.com'
const PRIVATE_RELAY = '@privaterelay.appleid.com'
const SECRET_LIFETIME_S = 24 * 60 * 60
const RENEW_BEFORE_S = 60 * 60

/** social_connections.apple_private_key_enc. */
export const appleKeyColumn = sealedColumn(
  socialConnections,
  socialConnections.applePrivateKeyEnc,
  (row) => `social-apple-key:${row.tenantId}:${row.id}`,
  { describe: (row) => `social connection ${row.id} of tenant ${row.tenantId} (Apple key)` },
)

export const sealAppleKey = (cipher: FieldCipher, tenantId: string, id: string, pem: string) =>
  appleKeyColumn.seal(cipher, { tenantId, id }, pem)

/** The key, or undefined when no listed key opens it (sealed under a retired key). */
export const openAppleKey = (cipher: FieldCipher, tenantId: string, id: string, sealed: string) =>
  appleKeyColumn.open(cipher, { tenantId, id }, sealed)

/** One PEM PKCS#8 block and nothing else (no second key or text to carry along). */
const PKCS8_PEM =
  /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----\s*$/

/** Whether `pem` is what Apple hands out: a P-256 private key in PEM PKCS#8. */
export function isAppleKey(pem: string): boolean {
  if (!PKCS8_PEM.test(pem.trim())) return false
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' })
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
  } catch {
    return false
  }
}

export interface AppleSigner {
  teamId: string
  keyId: string
  clientId: string
  privateKey: string
  audience: string
}

/**
 * The client secret of one connection version: `current` is what the token request sends
 * (openid-client's client authentication is synchronous), `renew()` mints a new one first
 * when the one held has less than an hour left.
 */
export class AppleClientSecret {
  private readonly signer: AppleSigner
  private readonly clock: Clock
  private minted: { jwt: string; exp: number } | undefined

  constructor(signer: AppleSigner, clock: Clock) {
    this.signer = signer
    this.clock = clock
  }

  get current(): string {
    if (!this.minted) throw new Error('no Apple client secret minted')
    return this.minted.jwt
  }

  async renew(): Promise<void> {
    const now = Math.floor(this.clock.now().getTime() / 1000)
    if (this.minted && this.minted.exp - now > RENEW_BEFORE_S) return
    const { teamId, keyId, clientId, privateKey, audience } = this.signer
    const exp = now + SECRET_LIFETIME_S
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: keyId })
      .setIssuer(teamId)
      .setSubject(clientId)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .sign(await importPKCS8(privateKey, 'ES256'))
    this.minted = { jwt, exp }
  }
}

/**
 * The profile of an Apple sign-in: the ID token's claims, a private-relay address counted
 * as verified, and the names of the `user` field (for a new account only; the linker
 * ignores them for an existing one).
 */
export function appleProfile(
  claims: Record<string, unknown>,
  amr: unknown,
  user: string | undefined,
): Profile {
  const relay =
    typeof claims.email === 'string' && claims.email.toLowerCase().endsWith(PRIVATE_RELAY)
  const verified = relay || claimsVerified(claims.email_verified)
  const profile = oidcProfile({ ...claims, email_verified: verified }, amr)
  const names = namesOf(user)
  return names ? { ...profile, names } : profile
}

/** `{"name": {"firstName", "lastName"}}` read leniently: a malformed field names nobody. */
function namesOf(user: string | undefined) {
  if (!user) return undefined
  let value: unknown
  try {
    value = JSON.parse(user)
  } catch {
    return undefined
  }
  const name = (value as { name?: unknown } | null)?.name
  if (typeof name !== 'object' || name === null) return undefined
  const part = (v: unknown) =>
    typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 200) : null
  const names = {
    givenName: part((name as Record<string, unknown>).firstName),
    familyName: part((name as Record<string, unknown>).lastName),
  }
  return names.givenName || names.familyName ? names : undefined
}
