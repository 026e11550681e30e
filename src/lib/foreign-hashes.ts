// Password hashes made by other systems, accepted by the user import (CONTRACT §14) and
// checked by the sign-in pipeline until the first successful sign-in replaces them with
// argon2id. Each is stored in users.password_hash as a self-describing string: the forms
// below as they were given, and Firebase's scrypt as `$firebase-scrypt$…` with the
// project's signer key sealed by the FieldCipher (a secret, rotated by `npm run rotate-keys`).
//
// Every cost is bounded before anything is computed, at import and again at every check, so
// a hash cannot make one sign-in cost more than the bounds allow; the checks run on libuv's
// thread pool (crypto.scrypt, crypto.pbkdf2, the bcrypt and argon2 bindings), never on the
// event loop, inside the same slots as argon2 (lib/passwords.ts).
import { createCipheriv, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto'
import { verify as argon2Verify } from '@node-rs/argon2'
import { verify as bcryptVerify } from '@node-rs/bcrypt'

/** The bounds of CONTRACT §14: beyond them a hash is `hash_too_expensive`, never tried. */
export const HASH_BOUNDS = {
  bcryptCost: 14,
  pbkdf2Iterations: 2_000_000,
  /**
   * Not in the contract (issue 36 F2): PBKDF2's whole cost is its iterations times the
   * 32-byte blocks of output (each block runs every iteration again), so the bound on
   * iterations holds for the product: a 750-byte key (24 blocks) at 2,000,000 iterations
   * would cost 24 times what the contract's bound means.
   */
  pbkdf2BlockIterations: 2_000_000,
  /** Bytes of memory for scrypt and argon2. */
  memoryBytes: 128 * 1024 * 1024,
  /**
   * Not in the contract (issue 36 F2): scrypt's p runs the whole memory-hard pass p times,
   * so memory × passes (128·N·r·p bytes) is bounded by the contract's memory bound.
   */
  scryptWorkBytes: 128 * 1024 * 1024,
  argon2Time: 10,
  /** Not in the contract: parallel lanes multiply scrypt's time, and argon2 needs m ≥ 8p. */
  parallelism: 16,
  firebaseRounds: 8,
  firebaseMemCost: 14,
} as const

export type HashRefusal = 'unsupported_hash' | 'hash_too_expensive'

/** Firebase's project hash parameters, as `firebase auth:export` prints them. */
export interface FirebaseHashConfig {
  signerKey: string
  saltSeparator: string
  rounds: number
  memCost: number
}

/** Opens and seals the Firebase signer key of one user's stored hash. */
export interface SignerKeySeal {
  seal(signerKey: string): string
  open(sealed: string): string | undefined
}

const B64 = '[A-Za-z0-9+/]*={0,2}'
const AB64 = '[A-Za-z0-9./]*'
const B64URLISH = '[A-Za-z0-9+/_-]*={0,2}'

const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/
const ARGON2 = new RegExp(
  `^\\$argon2(?:id|i)\\$(?:v=(?:16|19)\\$)?([a-z]=\\d+(?:,[a-z]=\\d+)*)\\$${B64}\\$${B64}$`,
)
const SCRYPT = new RegExp(`^\\$scrypt\\$ln=(\\d+),r=(\\d+),p=(\\d+)\\$(${AB64})\\$(${AB64})$`)
const DJANGO = /^pbkdf2_sha256\$(\d+)\$([^$]*)\$([A-Za-z0-9+/]+={0,2})$/
const PASSLIB_PBKDF2 = new RegExp(`^\\$pbkdf2-sha256\\$(\\d+)\\$(${AB64})\\$(${AB64})$`)
const PHC_PBKDF2 = new RegExp(`^\\$pbkdf2-sha256\\$i=(\\d+)(?:,l=(\\d+))?\\$(${B64})\\$(${B64})$`)
const FIREBASE = new RegExp(
  `^\\$firebase-scrypt\\$r=(\\d+),m=(\\d+)\\$(${B64URLISH})\\$(${B64URLISH})\\$(${B64URLISH})\\$([^$]+)$`,
)
const FIREBASE_INPUT = /^([A-Za-z0-9+/_-]+={0,2})(?:\$([A-Za-z0-9+/_-]*={0,2}))?$/

/** passlib's adapted base64: `.` for `+`, no padding. */
function ab64(text: string): Buffer {
  return Buffer.from(text.replaceAll('.', '+'), 'base64')
}

/** Standard or URL-safe base64 (Firebase's CLI prints the first, its Admin SDK the second). */
function b64(text: string): Buffer {
  return Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
}

function num(text: string | undefined): number {
  return text === undefined ? Number.NaN : Number(text)
}

/** Why a stored or offered hash cannot be checked, or undefined when it can. */
export function refuseHash(stored: string): HashRefusal | undefined {
  let m = BCRYPT.exec(stored)
  if (m) {
    const cost = num(m[1])
    if (cost < 4) return 'unsupported_hash'
    return cost > HASH_BOUNDS.bcryptCost ? 'hash_too_expensive' : undefined
  }
  m = ARGON2.exec(stored)
  if (m) {
    const params = new Map(m[1].split(',').map((kv) => [kv[0], num(kv.slice(2))]))
    const mem = params.get('m')
    const time = params.get('t')
    const lanes = params.get('p')
    if (params.size !== 3 || mem === undefined || time === undefined || lanes === undefined)
      return 'unsupported_hash'
    if (mem < 8 * lanes || time < 1 || lanes < 1) return 'unsupported_hash'
    if (mem * 1024 > HASH_BOUNDS.memoryBytes || time > HASH_BOUNDS.argon2Time) {
      return 'hash_too_expensive'
    }
    return lanes > HASH_BOUNDS.parallelism ? 'hash_too_expensive' : undefined
  }
  m = SCRYPT.exec(stored)
  if (m) {
    const [ln, r, p] = [num(m[1]), num(m[2]), num(m[3])]
    if (ln < 1 || r < 1 || p < 1 || ab64(m[5]).length < 16) return 'unsupported_hash'
    return scryptTooExpensive(ln, r, p) ? 'hash_too_expensive' : undefined
  }
  m = FIREBASE.exec(stored)
  if (m) return refuseFirebase(num(m[1]), num(m[2]))
  m = DJANGO.exec(stored)
  if (m) return refusePbkdf2(num(m[1]), Buffer.from(m[3], 'base64').length)
  m = PASSLIB_PBKDF2.exec(stored)
  if (m) return refusePbkdf2(num(m[1]), ab64(m[3]).length)
  m = PHC_PBKDF2.exec(stored)
  if (m) {
    const keyBytes = b64(m[4]).length
    if (m[2] !== undefined && num(m[2]) !== keyBytes) return 'unsupported_hash'
    return refusePbkdf2(num(m[1]), keyBytes)
  }
  return 'unsupported_hash'
}

/**
 * What checking a hash costs, in verifies of the service's own argon2id (m=19 MiB, t=2,
 * lib/passwords.ts), from its parameters alone: the unit the hash slots are sized in
 * (issue 36 F2: a check in the shared slots may cost at most DEAR_HASH_COST of them; a
 * dearer one runs in a lane of its own). The factors were measured side by side on the
 * 2-core bench machine (Node 24's OpenSSL, the @node-rs bindings) and rounded up:
 * argon2 scales with memory × passes (its lanes split the memory, they add no work);
 * 16 MiB·pass of scrypt ≈ 3 units; 100,000 PBKDF2-SHA256 block-iterations ≈ 1 unit;
 * bcrypt cost 10 ≈ 3.5 units, doubling with each step. Firebase's scrypt is scrypt with
 * N = 2^memCost, r = rounds, p = 1. Unknown or refused hashes cost 0: they are never run.
 */
export function hashCost(stored: string): number {
  if (refuseHash(stored) !== undefined) return 0
  let m = BCRYPT.exec(stored)
  if (m) return 3.5 * 2 ** (num(m[1]) - 10)
  m = ARGON2.exec(stored)
  if (m) {
    const params = new Map(m[1].split(',').map((kv) => [kv[0], num(kv.slice(2))]))
    return ((params.get('m') ?? 0) * (params.get('t') ?? 0)) / (19_456 * 2)
  }
  const MIB16 = 16 * 1024 * 1024
  m = SCRYPT.exec(stored)
  if (m) return (3 * scryptMemory(2 ** num(m[1]), num(m[2])) * num(m[3])) / MIB16
  m = FIREBASE.exec(stored)
  if (m) return (3 * scryptMemory(2 ** num(m[2]), num(m[1]))) / MIB16
  m = DJANGO.exec(stored)
  if (m) return pbkdf2Cost(num(m[1]), Buffer.from(m[3], 'base64').length)
  m = PASSLIB_PBKDF2.exec(stored)
  if (m) return pbkdf2Cost(num(m[1]), ab64(m[3]).length)
  m = PHC_PBKDF2.exec(stored)
  if (m) return pbkdf2Cost(num(m[1]), b64(m[4]).length)
  return 0
}

const pbkdf2Cost = (iterations: number, keyBytes: number) =>
  (iterations * pbkdf2Blocks(keyBytes)) / 100_000

/**
 * The cost above which a hash check leaves the shared slots for the dear lane: four
 * verifies of the service's argon2id (issue 36 F2).
 */
export const DEAR_HASH_COST = 4

function scryptTooExpensive(ln: number, r: number, p: number): boolean {
  if (ln > 30 || r > HASH_BOUNDS.memoryBytes || p > HASH_BOUNDS.parallelism) return true
  const memory = scryptMemory(2 ** ln, r)
  return memory > HASH_BOUNDS.memoryBytes || memory * p > HASH_BOUNDS.scryptWorkBytes
}

/** The memory scrypt takes: its V array, 128·N·r bytes. */
function scryptMemory(n: number, r: number): number {
  return 128 * n * r
}

/** PBKDF2-HMAC-SHA256 output blocks: each 32 bytes of derived key runs every iteration. */
const pbkdf2Blocks = (keyBytes: number) => Math.max(1, Math.ceil(keyBytes / 32))

function refusePbkdf2(iterations: number, keyBytes: number): HashRefusal | undefined {
  if (!(iterations >= 1) || keyBytes < 1) return 'unsupported_hash'
  if (iterations > HASH_BOUNDS.pbkdf2Iterations) return 'hash_too_expensive'
  return iterations * pbkdf2Blocks(keyBytes) > HASH_BOUNDS.pbkdf2BlockIterations
    ? 'hash_too_expensive'
    : undefined
}

function refuseFirebase(rounds: number, memCost: number): HashRefusal | undefined {
  if (!Number.isInteger(rounds) || !Number.isInteger(memCost) || rounds < 1 || memCost < 1) {
    return 'unsupported_hash'
  }
  if (rounds > HASH_BOUNDS.firebaseRounds || memCost > HASH_BOUNDS.firebaseMemCost) {
    return 'hash_too_expensive'
  }
  return undefined
}

/**
 * The string to store for an imported hash, or why it is refused. `seal` is asked for only
 * when the hash is Firebase's (the signer key is sealed to the user's row).
 */
export function importHash(
  input: { passwordHash: string; passwordSalt?: string },
  firebase: FirebaseHashConfig | undefined,
  seal: () => SignerKeySeal,
): { stored: string } | { refused: HashRefusal } {
  const hash = input.passwordHash
  const m = firebase && FIREBASE_INPUT.exec(hash)
  if (firebase && m) {
    const salt = m[2] ?? input.passwordSalt
    if (salt === undefined || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(salt)) {
      return { refused: 'unsupported_hash' }
    }
    const refused = refuseFirebase(firebase.rounds, firebase.memCost)
    if (refused) return { refused }
    if (b64(m[1]).length === 0 || b64(firebase.signerKey).length === 0) {
      return { refused: 'unsupported_hash' }
    }
    const sealed = seal().seal(firebase.signerKey)
    const stored = `$firebase-scrypt$r=${firebase.rounds},m=${firebase.memCost}$${firebase.saltSeparator}$${salt}$${m[1]}$${sealed}`
    return FIREBASE.test(stored) ? { stored } : { refused: 'unsupported_hash' }
  }
  if (hash.startsWith('$firebase-scrypt$')) return { refused: 'unsupported_hash' }
  const refused = refuseHash(hash)
  return refused ? { refused } : { stored: hash }
}

/** Whether a stored hash is one of the foreign forms (not made by this service). */
export function isForeignHash(stored: string): boolean {
  return !stored.startsWith('$argon2id$') && refuseHash(stored) !== 'unsupported_hash'
}

/**
 * Checks `password` against a stored foreign hash, in constant time over the derived
 * bytes. A hash beyond the bounds, malformed, or whose signer key no listed key opens,
 * answers false without being computed.
 */
export async function verifyForeignHash(
  stored: string,
  password: string,
  seal?: SignerKeySeal,
): Promise<boolean> {
  if (refuseHash(stored) !== undefined) return false
  return check(stored, password, seal).catch(() => false)
}

async function check(stored: string, password: string, seal?: SignerKeySeal): Promise<boolean> {
  let m = BCRYPT.exec(stored)
  // $2y$ (PHP) is the same algorithm as $2b$; the binding knows the latter.
  if (m) return bcryptVerify(password, stored.replace(/^\$2y\$/, '$2b$'))
  if (ARGON2.test(stored)) return argon2Verify(stored, password)
  m = SCRYPT.exec(stored)
  if (m) {
    const [n, r, p] = [2 ** num(m[1]), num(m[2]), num(m[3])]
    const expected = ab64(m[5])
    const actual = await scryptAsync(password, ab64(m[4]), expected.length, n, r, p)
    return same(actual, expected)
  }
  m = FIREBASE.exec(stored)
  if (m) return verifyFirebase(m, password, seal)
  m = DJANGO.exec(stored)
  if (m) {
    const expected = Buffer.from(m[3], 'base64')
    const salt = Buffer.from(m[2], 'utf8')
    return same(await pbkdf2Async(password, salt, num(m[1]), expected.length), expected)
  }
  m = PASSLIB_PBKDF2.exec(stored)
  if (m) {
    const expected = ab64(m[3])
    return same(await pbkdf2Async(password, ab64(m[2]), num(m[1]), expected.length), expected)
  }
  m = PHC_PBKDF2.exec(stored)
  if (m) {
    const expected = b64(m[4])
    return same(await pbkdf2Async(password, b64(m[3]), num(m[1]), expected.length), expected)
  }
  return false
}

/**
 * Firebase's modified scrypt (its published reference, github.com/firebase/scrypt): the
 * key derived from the password and salt‖separator, with N = 2^memCost, r = rounds, p = 1,
 * encrypts the project's signer key with AES-256-CTR under a zero IV; the result is the hash.
 */
async function verifyFirebase(
  m: RegExpExecArray,
  password: string,
  seal: SignerKeySeal | undefined,
): Promise<boolean> {
  const signerKey = seal?.open(m[6])
  if (signerKey === undefined) return false
  const [rounds, memCost] = [num(m[1]), num(m[2])]
  const salt = Buffer.concat([b64(m[4]), b64(m[3])])
  const key = await scryptAsync(password, salt, 32, 2 ** memCost, rounds, 1)
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16, 0))
  const actual = Buffer.concat([cipher.update(b64(signerKey)), cipher.final()])
  return same(actual, b64(m[5]))
}

function scryptAsync(
  password: string,
  salt: Buffer,
  length: number,
  n: number,
  r: number,
  p: number,
): Promise<Buffer> {
  // maxmem above the bound by the small B array (128·r·p) and slack, never above it by more.
  const maxmem = scryptMemory(n, r) + 128 * r * p + 1024 * 1024
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, { N: n, r, p, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  )
}

function pbkdf2Async(password: string, salt: Buffer, iterations: number, length: number) {
  return new Promise<Buffer>((resolve, reject) =>
    pbkdf2(password, salt, iterations, length, 'sha256', (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  )
}

/** Constant-time equality of a derived key and the stored one (lengths are public). */
function same(actual: Buffer, expected: Buffer): boolean {
  return (
    expected.length > 0 && actual.length === expected.length && timingSafeEqual(actual, expected)
  )
}

/** The sealed Firebase signer key inside a stored hash, for key rotation. */
export function sealedSignerKey(stored: string): string | undefined {
  return FIREBASE.exec(stored)?.[6]
}

/** The stored hash with its sealed signer key replaced (key rotation). */
export function withSealedSignerKey(stored: string, sealed: string): string {
  const at = stored.lastIndexOf('$')
  return `${stored.slice(0, at + 1)}${sealed}`
}
