// OIDC_SIGNING_KEYS (CONTRACT §11): the keys the OpenID provider signs ID tokens, JWT
// access tokens (RFC 9068) and logout tokens with. PEM private keys written one after the
// other, newest first: RSA keys (2048 bits or more) sign RS256, the default every client
// supports; EC P-256 keys offer ES256 to clients that ask for it. The first key of each
// type signs; all are published in the jwks so tokens signed by an older key still verify
// until it is removed (rotation as JWT_PRIVATE_KEYS). Development: an RSA and an EC key
// generated once and kept in DATA_DIR.
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { loadDevKeys, parsePemPrivateKeys } from './pem-keys.ts'

export type OidcKeyAlgorithm = 'RS256' | 'ES256'

/** The algorithm a key signs with, or a problem with it. */
export function oidcKeyAlgorithm(key: KeyObject): OidcKeyAlgorithm | { problem: string } {
  if (key.asymmetricKeyType === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0
    return bits >= 2048 ? 'RS256' : { problem: 'RSA keys must have at least 2048 bits' }
  }
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return 'ES256'
  }
  return { problem: 'expected an RSA key (RS256) or an EC key on the P-256 curve (ES256)' }
}

/**
 * Parses OIDC_SIGNING_KEYS: answers the keys as PKCS#8 PEM, newest first, or a problem
 * naming the block that is wrong. At least one RSA key is required: RS256 is the
 * algorithm OpenID Connect clients may assume (Core 1.0 §15.1).
 */
export function parseOidcSigningKeys(raw: string): { keys: string[] } | { problem: string } {
  let rsa = false
  const parsed = parsePemPrivateKeys(raw, (key, n) => {
    const alg = oidcKeyAlgorithm(key)
    if (typeof alg === 'object') return `key ${n}: ${alg.problem}`
    if (alg === 'RS256') rsa = true
    return undefined
  })
  if ('problem' in parsed) return parsed
  if (!rsa) return { problem: 'at least one RSA key is required (RS256 is the default)' }
  return parsed
}

/** The development keys: an RSA and an EC P-256 key, generated once, then read back. */
export function loadDevOidcKeys(dataDir: string): string {
  return loadDevKeys(dataDir, 'dev-oidc-signing-keys.pem', () => [
    generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  ])
}
