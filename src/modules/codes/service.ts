// Emailed one-time codes, the neutral library every code-based factor uses: passwordless
// login codes, email OTP second factors, and the codes of later purposes (SPEC, Limits;
// CONTRACT §5): 6 digits, valid 10 minutes, burned by the 5th wrong guess,
// superseded by a newer code, spent once.
//
// Storage: a 6-digit code has only 10^6 values, so a bare SHA-256 of it is reversed by
// trying them all. Codes are stored as HMAC-SHA256 under a key derived (HKDF-SHA256,
// RFC 5869) from the current ENCRYPTION_KEYS entry, over the owner (tenant, user,
// purpose) and the code: `<key version>:<base64url mac>`. Without the key the table
// reveals nothing, and a row copied to another user, tenant or purpose never matches.
// Every listed key version is tried, so codes issued just before a key rotation still work.
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { EncryptionKey } from '../../config.ts'
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { randomDigits, subKey } from '../../lib/crypto.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { Mail, Mailer } from '../../lib/mailer.ts'
import { lockUserRow } from '../users/reads.ts'
import * as store from './queries.ts'

/** What the codes library uses of the service. */
export type CodeDeps = Pick<Deps, 'db' | 'clock' | 'config'>

export type { CodeOwner, CodePurpose } from './queries.ts'

import type { CodeOwner } from './queries.ts'

export const CODE_DIGITS = 6
export const CODE_TTL_SECONDS = 10 * 60
export const MAX_WRONG_GUESSES = 5

/**
 * Every answer to a code request takes at least this long. The work differs a little
 * between a real address (a code row and an audit row are written) and an unknown one;
 * answering on a fixed schedule hides that difference (SPEC note 1; CONTRACT §9).
 */
export const CODE_REQUEST_FLOOR_MS = 200

/**
 * Runs a code request's work and answers no sooner than CODE_REQUEST_FLOOR_MS after it
 * began. The mail the work made (a real address only) is handed to the mailer after the
 * floor, to be sent once the answer is on its way (Mailer.deliver's afterAnswer): building
 * and sending it inside the floor competed with the floor's own timer, and on a loaded
 * machine a real address's answers came 20-40 ms later than an unknown one's.
 */
export async function onRequestFloor(
  mailer: Pick<Mailer, 'deliver'>,
  work: () => Promise<Mail | undefined>,
): Promise<void> {
  const started = performance.now()
  const mail = await work()
  const wait = started + CODE_REQUEST_FLOOR_MS - performance.now()
  if (wait > 0) await sleep(wait)
  if (mail) mailer.deliver(mail, { afterAnswer: true })
}

function mac(key: EncryptionKey, o: CodeOwner, code: string): string {
  const digest = createHmac('sha256', subKey(key.key, 'one-time-code-hmac'))
    .update(`${o.purpose}:${o.tenantId}:${o.userId}:${code}`, 'utf8')
    .digest('base64url')
  return `${key.version}:${digest}`
}

/** The stored form of a new code, under the current (first) key. */
export function sealCode(keys: EncryptionKey[], o: CodeOwner, code: string): string {
  return mac(keys[0], o, code)
}

/** Every stored form `code` may have: one per key version still listed. */
export function codeCandidates(keys: EncryptionKey[], o: CodeOwner, code: string): string[] {
  return keys.map((k) => mac(k, o, code))
}

/**
 * Issues a new code inside the caller's transaction: the owner's row is locked, open codes
 * are superseded, the new one is stored hashed. With no user (an unknown or suspended
 * address) the same statements run against a random id and match nothing, so both paths
 * do the same work; nothing is stored and undefined is answered.
 */
export async function issueCode(
  deps: CodeDeps,
  tx: Handle,
  owner: { tenantId: string; userId: string | undefined; purpose: CodeOwner['purpose'] },
  /**
   * How long the code works (10 minutes unless said otherwise), and `delivery: 'link'` for
   * the code a magic link carries (CONTRACT §20: 15 minutes).
   */
  options: { ttlSeconds?: number; delivery?: 'link' } = {},
): Promise<string | undefined> {
  const { ttlSeconds = CODE_TTL_SECONDS, delivery } = options
  const now = deps.clock.now()
  const o: CodeOwner = { ...owner, userId: owner.userId ?? uuidv7(now.getTime()) }
  const code = randomDigits(CODE_DIGITS)
  const codeHash = sealCode(deps.config.encryptionKeys, o, code)
  await lockUserRow(tx, o.tenantId, o.userId)
  await store.supersedeCodes(tx, o, now)
  if (owner.userId === undefined) return undefined
  await store.insertCode(tx, o, {
    id: uuidv7(now.getTime()),
    codeHash,
    now,
    expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    delivery,
  })
  return code
}

export type CodeCheck =
  | { ok: true /** The code a magic link carries (CONTRACT §20). */; link?: boolean }
  | { ok: false; reason: 'wrong' | 'burned' | 'no_open_code'; attempts?: number }

/**
 * Checks a code without spending it (a login code stays valid while a second factor is
 * asked for). A wrong guess is counted against the open code at once.
 */
export async function checkCode(deps: CodeDeps, o: CodeOwner, code: string): Promise<CodeCheck> {
  const now = deps.clock.now()
  const candidates = codeCandidates(deps.config.encryptionKeys, o, code)
  const wrong = await store.countWrongGuess(deps.db, o, candidates, now, MAX_WRONG_GUESSES)
  // Both statements always run: answering a wrong guess one round trip sooner would tell a
  // known address (with an open code) from an unknown one by the time it takes.
  const matching = await store.findMatchingCode(deps.db, o, candidates, now)
  if (wrong) return { ok: false, reason: wrong.burned ? 'burned' : 'wrong', ...wrong }
  if (matching) return { ok: true, link: matching.delivery === 'link' }
  return { ok: false, reason: 'no_open_code' }
}

/** Whether `code` is the owner's open code; nothing changes, a wrong one is not counted. */
export async function isOpenCode(deps: CodeDeps, o: CodeOwner, code: string): Promise<boolean> {
  const candidates = codeCandidates(deps.config.encryptionKeys, o, code)
  return (await store.findMatchingCode(deps.db, o, candidates, deps.clock.now())) !== undefined
}

/**
 * Spends a code in one atomic statement; a wrong guess is counted instead. Answers true
 * for exactly one of any number of parallel callers presenting the right code.
 */
export async function spendCode(
  deps: CodeDeps,
  handle: Handle,
  o: CodeOwner,
  code: string,
): Promise<CodeCheck> {
  const now = deps.clock.now()
  const candidates = codeCandidates(deps.config.encryptionKeys, o, code)
  if (await store.spendMatchingCode(handle, o, candidates, now)) return { ok: true }
  const wrong = await store.countWrongGuess(handle, o, candidates, now, MAX_WRONG_GUESSES)
  if (wrong) return { ok: false, reason: wrong.burned ? 'burned' : 'wrong', ...wrong }
  return { ok: false, reason: 'no_open_code' }
}
