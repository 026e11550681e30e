// Password hashing and the password rules of CONTRACT §4.
import { availableParallelism } from 'node:os'
import { type Algorithm, hash, verify } from '@node-rs/argon2'
import { dictionary } from '@zxcvbn-ts/language-common'
import { normalizeEmail } from './email.ts'
import { Semaphore } from './semaphore.ts'

/** OWASP Password Storage Cheat Sheet: argon2id, m=19 MiB, t=2, p=1. */
export const ARGON2_PARAMS = {
  // Algorithm.Argon2id; the package's const enum cannot be imported under type stripping.
  algorithm: 2 as Algorithm,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const

const slots = new Semaphore(availableParallelism())

/** Password hashes running and waiting for a slot, for the metrics. */
export function hashLoad(): { running: number; queued: number } {
  return { running: slots.running, queued: slots.queued }
}

/** Passwords are compared as given: NFC-normalised, never trimmed or truncated. */
export function normalizePassword(password: string): string {
  return password.normalize('NFC')
}

export function hashPassword(password: string): Promise<string> {
  return slots.run(() => hash(normalizePassword(password), ARGON2_PARAMS))
}

// A real hash of a random string: unknown emails are verified against it, so that they
// take as long as a wrong password for a real account.
let dummyHash: Promise<string> | undefined
function getDummyHash(): Promise<string> {
  dummyHash ??= hash(crypto.randomUUID(), ARGON2_PARAMS)
  return dummyHash
}

/** Verifies `password`; with no stored hash it spends the same time and answers false. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  const target = stored ?? (await getDummyHash())
  const ok = await slots.run(() => verify(target, normalizePassword(password)).catch(() => false))
  return stored !== null && ok
}

/** True when the stored hash was made with other parameters than today's. */
export function needsRehash(stored: string): boolean {
  const p = ARGON2_PARAMS
  return !stored.startsWith(`$argon2id$v=19$m=${p.memoryCost},t=${p.timeCost},p=${p.parallelism}$`)
}

const common = new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()))

/**
 * The weak-password rule: no composition rules, but a password that is on the
 * common-password list (about 49,000 entries), or equals the email or the tenant name,
 * is refused.
 */
export function isWeakPassword(password: string, context: { email: string; tenantName?: string }) {
  const p = normalizePassword(password).toLowerCase()
  if (common.has(p)) return true
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
