// OIDC_SIGNING_KEYS (CONTRACT §11): the keys the OpenID provider signs ID tokens, JWT
// access tokens (RFC 9068) and logout tokens with. PEM private keys written one after the
// other, newest first: RSA keys (2048 bits or more) sign RS256, the default every client
// supports; EC P-256 keys offer ES256 to clients that ask for it. The first key of each
// type signs; all are published in the jwks so tokens signed by an older key still verify
// until it is removed (rotation as JWT_PRIVATE_KEYS). Development: an RSA and an EC key
// generated once and kept in DATA_DIR.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g

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
  const text = raw.replace(/\\n/g, '\n')
  if (text.replace(PEM_BLOCK, '').trim() !== '') {
    return { problem: 'expected PEM private keys (-----BEGIN PRIVATE KEY-----…), newest first' }
  }
  const blocks = [...text.matchAll(PEM_BLOCK)].filter((m) => m[1] !== 'EC PARAMETERS')
  if (blocks.length === 0) return { problem: 'at least one PEM private key is required' }
  const keys: string[] = []
  let rsa = false
  for (const [n, block] of blocks.entries()) {
    let key: KeyObject
    try {
      key = createPrivateKey(block[0])
    } catch {
      return { problem: `key ${n + 1} is not an unencrypted PEM private key` }
    }
    const alg = oidcKeyAlgorithm(key)
    if (typeof alg === 'object') return { problem: `key ${n + 1}: ${alg.problem}` }
    if (alg === 'RS256') rsa = true
    const pem = key.export({ type: 'pkcs8', format: 'pem' }).toString()
    if (keys.includes(pem)) return { problem: `key ${n + 1} appears twice` }
    keys.push(pem)
  }
  if (!rsa) return { problem: 'at least one RSA key is required (RS256 is the default)' }
  return { keys }
}

/** The development keys: an RSA and an EC P-256 key, generated once, then read back. */
export function loadDevOidcKeys(dataDir: string): string {
  const file = join(dataDir, 'dev-oidc-signing-keys.pem')
  try {
    return readFileSync(file, 'utf8')
  } catch {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    const pem = [rsa, ec].map((k) => k.export({ type: 'pkcs8', format: 'pem' })).join('')
    mkdirSync(dataDir, { recursive: true })
    try {
      writeFileSync(file, pem, { mode: 0o600, flag: 'wx' })
      return pem
    } catch {
      // Another process starting at the same moment wrote it first: use theirs.
      return readFileSync(file, 'utf8')
    }
  }
}
