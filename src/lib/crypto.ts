// Random tokens, hashes of tokens and field encryption. No Fastify imports here.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  randomInt,
  timingSafeEqual,
} from 'node:crypto'
import type { EncryptionKey } from '../config.ts'

/** An opaque secret with 256 random bits, URL-safe. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/**
 * SHA-256 of a high-entropy token. Tokens carry 256 random bits, so a fast hash is enough
 * to store them (a slow hash protects low-entropy secrets such as passwords and codes).
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url')
}

/** A uniformly random string of `length` decimal digits. */
export function randomDigits(length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) out += randomInt(10).toString()
  return out
}

/**
 * Compares two secrets in time that depends on neither: their SHA-256 digests are compared,
 * so a length difference does not end the comparison early (and reveal the length).
 */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest()
  const db = createHash('sha256').update(b, 'utf8').digest()
  return timingSafeEqual(da, db)
}

const subKeys = new WeakMap<Buffer, Map<string, Buffer>>()

/**
 * The 32-byte key for one purpose (`label`, RFC 5869 HKDF-SHA256's info, no salt) derived
 * from a key of ENCRYPTION_KEYS, so no two uses ever share a key. Derived once per key and
 * label, then cached for as long as the key itself is held.
 */
export function subKey(key: Buffer, label: string): Buffer {
  let byLabel = subKeys.get(key)
  if (!byLabel) {
    byLabel = new Map()
    subKeys.set(key, byLabel)
  }
  let out = byLabel.get(label)
  if (!out) {
    out = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), label, 32))
    byLabel.set(label, out)
  }
  return out
}

/**
 * AES-256-GCM under versioned keys: `<version>:<iv>:<tag>:<ciphertext>` (base64url parts).
 * The first key encrypts; every listed key decrypts, so old rows survive a rotation.
 * `aad` binds a ciphertext to its row (for example tenant and user id), so it cannot be
 * copied to another row.
 */
export class FieldCipher {
  // KeyObjects made once: handed a Buffer, each cipher made a key of it again, which was
  // three quarters of a decryption's time (the provider opens a client's secret on every
  // request that names the client).
  private readonly keys: { version: string; key: KeyObject }[]
  constructor(keys: EncryptionKey[]) {
    if (keys.length === 0) throw new Error('FieldCipher needs at least one key')
    this.keys = keys.map(({ version, key }) => ({ version, key: createSecretKey(key) }))
  }

  get currentVersion(): string {
    return this.keys[0].version
  }

  encrypt(plaintext: string, aad: string): string {
    const { version, key } = this.keys[0]
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    cipher.setAAD(Buffer.from(aad, 'utf8'))
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    const parts = [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url'))
    return [version, ...parts].join(':')
  }

  decrypt(sealed: string, aad: string): string {
    const [version, iv, tag, data] = sealed.split(':')
    const entry = this.keys.find((k) => k.version === version)
    if (!entry || !iv || !tag || data === undefined) throw new Error('unknown encryption key')
    const decipher = createDecipheriv('aes-256-gcm', entry.key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(aad, 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([
      decipher.update(Buffer.from(data, 'base64url')),
      decipher.final(),
    ]).toString('utf8')
  }

  versionOf(sealed: string): string {
    return sealed.slice(0, sealed.indexOf(':'))
  }
}
