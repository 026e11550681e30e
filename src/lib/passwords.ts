// Password hashing and the password rules of CONTRACT §4.
import { availableParallelism } from 'node:os'
import { type Algorithm, hash, verify } from '@node-rs/argon2'
import { isCommonPassword } from './common-passwords.ts'
import { normalizeEmail } from './email.ts'
import { AppError } from './errors.ts'
import {
  DEAR_HASH_COST,
  hashCost,
  type SignerKeySeal,
  verifyForeignHash,
} from './foreign-hashes.ts'
import { Semaphore, SemaphoreFull } from './semaphore.ts'

/** OWASP Password Storage Cheat Sheet: argon2id, m=19 MiB, t=2, p=1. */
export const ARGON2_PARAMS = {
  // Algorithm.Argon2id; the package's const enum cannot be imported under type stripping.
  algorithm: 2 as Algorithm,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const

/**
 * How many hashes run at once by default: one per core and one more, but never more than
 * libuv's thread pool, where they run (src/server.ts sizes the pool to two per core plus
 * two). On the 2-core machines of `npm run bench`, argon2id verifies fastest with 3 in
 * flight (207/s against 193/s with 4 on one, 108/s against 98/s on another); with the
 * service's own work beside them, 3 signed in as many or more per second than 4, with less
 * CPU per sign-in, and 19 MiB less memory at the peak (issue 10).
 */
export function defaultHashConcurrency(env: { UV_THREADPOOL_SIZE?: string }): number {
  const pool = Number(env.UV_THREADPOOL_SIZE) || 4
  return Math.max(1, Math.min(availableParallelism() + 1, pool))
}

// Until configureHashing() runs (buildApp calls it with the configured bounds).
const slots = new Semaphore(defaultHashConcurrency({}), 64)
/**
 * The dear lane (issue 36 F2): imported hashes costing more than DEAR_HASH_COST argon2id
 * verifies (PBKDF2 at Django's million iterations, bcrypt above cost 10, large scrypt or
 * argon2) run here, never in `slots`, so a tenant's costly imported rows cannot hold the
 * slots every other sign-in waits for. Half the slots (at least one), the same queue bound.
 */
const dearSlots = new Semaphore(dearConcurrency(defaultHashConcurrency({})), 64)

function dearConcurrency(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 2))
}

/**
 * Sets the bound: `concurrency` hashes in flight, `queueLimit` more waiting. A hash asked
 * for beyond both is refused at once with 503 `unavailable` and Retry-After (a login flood
 * is shed instead of queueing without end). The slots are the process's, like the thread
 * pool they stand for: every app in the process shares them.
 */
export function configureHashing(options: { concurrency: number; queueLimit: number }): void {
  slots.resize(options.concurrency, options.queueLimit)
  dearSlots.resize(dearConcurrency(options.concurrency), options.queueLimit)
}

function hashing<T>(job: () => Promise<T>, lane = slots): Promise<T> {
  return lane.run(job).catch((error) => {
    if (error instanceof SemaphoreFull) {
      throw new AppError('unavailable', {
        message: 'Too many sign-ins at once; try again in a moment.',
        retryAfter: 1,
      })
    }
    throw error
  })
}

/** Password hashes running and waiting for a slot (the shared slots), for the metrics. */
export function hashLoad(): { running: number; queued: number } {
  return { running: slots.running, queued: slots.queued }
}

/** Imported hashes running and waiting in the dear lane. */
export function dearHashLoad(): { running: number; queued: number } {
  return { running: dearSlots.running, queued: dearSlots.queued }
}

/** Passwords are compared as given: NFC-normalised, never trimmed or truncated. */
export function normalizePassword(password: string): string {
  return password.normalize('NFC')
}

export function hashPassword(password: string): Promise<string> {
  return hashing(() => hash(normalizePassword(password), ARGON2_PARAMS))
}

// A real hash of a random string: unknown emails are verified against it, so that they
// take as long as a wrong password for a real account.
let dummyHash: Promise<string> | undefined
function getDummyHash(): Promise<string> {
  dummyHash ??= hash(crypto.randomUUID(), ARGON2_PARAMS)
  return dummyHash
}

/**
 * Verifies `password`; with no stored hash it spends the same time and answers false. A
 * hash made elsewhere and imported (lib/foreign-hashes.ts) is checked, within its bounds,
 * in the same slots, or in the dear lane when it costs more than four of ours; `seal`
 * opens the signer key of a Firebase hash.
 */
export async function verifyPassword(
  stored: string | null,
  password: string,
  seal?: SignerKeySeal,
): Promise<boolean> {
  const target = stored ?? (await getDummyHash())
  if (stored !== null && needsRehash(stored)) {
    // Hashes of older parameters, or imported: checked within their bounds (§14), the dear
    // ones in their own lane.
    const lane = hashCost(stored) > DEAR_HASH_COST ? dearSlots : slots
    return hashing(() => verifyForeignHash(stored, normalizePassword(password), seal), lane)
  }
  const ok = await hashing(() => verify(target, normalizePassword(password)).catch(() => false))
  return stored !== null && ok
}

/**
 * verifyPassword for a sign-in try reserved in the failure budgets: a check refused for
 * load (503) proved nothing, so the try's points go back before the refusal is thrown.
 */
export async function verifyPasswordTry(
  attempt: { release(): Promise<void> },
  stored: string | null,
  password: string,
  seal?: SignerKeySeal,
): Promise<boolean> {
  try {
    return await verifyPassword(stored, password, seal)
  } catch (error) {
    await attempt.release()
    throw error
  }
}

/** True when the stored hash was made with other parameters than today's. */
export function needsRehash(stored: string): boolean {
  const p = ARGON2_PARAMS
  return !stored.startsWith(`$argon2id$v=19$m=${p.memoryCost},t=${p.timeCost},p=${p.parallelism}$`)
}

/**
 * The weak-password rule: no composition rules, but a password that is on the
 * common-password list (about 49,000 entries), or equals the email or the tenant name,
 * is refused.
 */
export function isWeakPassword(password: string, context: { email: string; tenantName?: string }) {
  const p = normalizePassword(password).toLowerCase()
  if (isCommonPassword(p)) return true
  if (p === normalizeEmail(context.email)) return true
  const local = normalizeEmail(context.email).split('@')[0]
  if (p === local) return true
  if (context.tenantName && p === context.tenantName.trim().toLowerCase()) return true
  return false
}

/** Warms the dummy hash so the first unknown-email login is not slower than later ones. */
export async function warmPasswords(): Promise<void> {
  await getDummyHash()
}
