// The relying party (WebAuthn Level 3 §7) as this service plays it, over @simplewebauthn/server:
// RP ID = the host of PUBLIC_URL, origin = its origin (CONTRACT §9); challenges of 256 random
// bits, stored as SHA-256 of their base64url form, single use, 5 minutes; user verification
// required in both ceremonies. Also the structural checks that run before a challenge is
// spent: a response that is not even shaped like a credential is a 400 that changes nothing.
import { randomBytes } from 'node:crypto'
import type { Config } from '../../config.ts'
import { fail } from '../../lib/errors.ts'

/**
 * @simplewebauthn/server, loaded at the first passkey request: it costs about 26 MB of
 * resident memory, which a service whose users never use passkeys need not hold.
 */
let library: Promise<WebAuthnLibrary> | undefined

export type WebAuthnLibrary = typeof import('@simplewebauthn/server') &
  typeof import('@simplewebauthn/server/helpers')

export function webauthnLibrary(): Promise<WebAuthnLibrary> {
  library ??= Promise.all([
    import('@simplewebauthn/server'),
    import('@simplewebauthn/server/helpers'),
  ]).then(([server, helpers]) => ({ ...server, ...helpers }))
  return library
}

export const CHALLENGE_TTL_SECONDS = 5 * 60
/** EdDSA, ES256, RS256 (COSE algorithm ids), offered and accepted. */
export const ALGORITHMS = [-8, -7, -257]
/** A user holds at most this many passkeys (each is listed in every registration). */
export const MAX_PASSKEYS_PER_USER = 20

export interface RelyingParty {
  id: string
  origin: string
}

export function relyingParty(config: Pick<Config, 'publicUrl'>): RelyingParty {
  const url = new URL(config.publicUrl)
  return { id: url.hostname, origin: url.origin }
}

/** A fresh challenge: 32 random bytes (WebAuthn §13.4.3 asks for at least 16). */
export function newChallenge(): Uint8Array<ArrayBuffer> {
  return new Uint8Array(randomBytes(32))
}

/**
 * The user handle of the credentials a user registers: the 16 bytes of the user id, which
 * names no personal data (WebAuthn §14.6.1) and is stable for the account.
 */
export function userHandle(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId.replaceAll('-', ''), 'hex'))
}

export function userHandleString(userId: string): string {
  return Buffer.from(userHandle(userId)).toString('base64url')
}

function malformed(path: string, message: string): never {
  fail('validation', {
    message: 'The passkey response is malformed.',
    details: { issues: [{ path: `body.response.${path}`, message }] },
  })
}

/** `rawId` is the same credential id as `id` (WebAuthn §5.1: both name one credential). */
export function checkRawId(credential: { id: string; rawId: string }): void {
  if (credential.rawId !== credential.id) malformed('rawId', 'must equal id')
}

const CHALLENGE = /^[A-Za-z0-9_-]{16,128}$/

/**
 * The challenge a client signed, read from clientDataJSON (WebAuthn §5.8.1), once the
 * member decodes to a JSON object with string `type`, `challenge` and `origin`.
 */
export function signedChallenge(clientDataJSON: string): string {
  let data: unknown
  try {
    if (!/^[A-Za-z0-9_-]*={0,2}$/.test(clientDataJSON)) throw 0
    data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
  } catch {
    malformed('response.clientDataJSON', 'is not base64url-encoded JSON')
  }
  const fields = data as Record<string, unknown> | null
  if (
    typeof fields !== 'object' ||
    fields === null ||
    typeof fields.type !== 'string' ||
    typeof fields.origin !== 'string' ||
    typeof fields.challenge !== 'string' ||
    !CHALLENGE.test(fields.challenge)
  ) {
    malformed('response.clientDataJSON', 'lacks type, origin or a challenge')
  }
  return fields.challenge as string
}

/** The attestation object decodes (CBOR: fmt, attStmt, authData with a credential). */
export async function checkAttestationShape(attestationObject: string): Promise<void> {
  const { decodeAttestationObject, isoBase64URL, parseAuthenticatorData } = await webauthnLibrary()
  try {
    const decoded = decodeAttestationObject(isoBase64URL.toBuffer(attestationObject))
    const authData = decoded.get('authData')
    if (typeof decoded.get('fmt') !== 'string' || !(authData instanceof Uint8Array)) throw 0
    if (!parseAuthenticatorData(authData).credentialID) throw 0
  } catch {
    malformed('response.attestationObject', 'is not a CBOR attestation object with a credential')
  }
}

/** The authenticator data parses (rpIdHash, flags, counter: at least 37 bytes). */
export async function checkAssertionShape(authenticatorData: string): Promise<void> {
  const { isoBase64URL, parseAuthenticatorData } = await webauthnLibrary()
  try {
    parseAuthenticatorData(isoBase64URL.toBuffer(authenticatorData))
  } catch {
    malformed('response.authenticatorData', 'is not authenticator data')
  }
}
