// ALTCHA, the self-hosted CAPTCHA (CONTRACT §21): a proof-of-work challenge made and
// checked by altcha-lib (v2, PBKDF2/SHA-256), no third party involved. The challenge is
// signed with a key of the tenant's own, derived from the service's first ENCRYPTION_KEYS
// entry (HKDF, so the field key itself signs nothing and one tenant's challenge is no
// answer for another's); it is deterministic (the counter the solver must find is chosen
// here and the derived key signed, so a check costs one HMAC, not a key derivation), good
// for five minutes and for one answer (lib/spent-once.ts).
import { hkdfSync } from 'node:crypto'
import { createChallenge, randomInt, verifySolution } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2'
import type { Challenge, Payload } from 'altcha-lib/types'
import type { Config } from '../../config.ts'
import type { Clock } from '../../lib/clock.ts'
import type { SpentOnce } from '../../lib/spent-once.ts'

/** A challenge is answered within five minutes or not at all. */
export const CHALLENGE_TTL_SECONDS = 5 * 60

/**
 * The work: PBKDF2 rounds per try, and the range of the counter the solver must reach (on
 * average 6,000 tries: about a second in a browser's workers, a bot's cost per request).
 */
const COST = 100
const COUNTER_MIN = 2_000
const COUNTER_MAX = 10_000

/** The tenant's two signing secrets (the challenge's, the derived key's), hex. */
function secretsOf(config: Pick<Config, 'encryptionKeys'>, tenantId: string) {
  const key = config.encryptionKeys[0].key
  const derive = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', key, tenantId, `altcha:${purpose}`, 32)).toString('hex')
  return { challenge: derive('challenge'), key: derive('key') }
}

export async function altchaChallenge(
  deps: { config: Pick<Config, 'encryptionKeys'>; clock: Clock },
  tenantId: string,
): Promise<Challenge> {
  const secrets = secretsOf(deps.config, tenantId)
  return createChallenge({
    algorithm: 'PBKDF2/SHA-256',
    cost: COST,
    counter: randomInt(COUNTER_MAX, COUNTER_MIN),
    deriveKey,
    expiresAt: Math.floor(deps.clock.now().getTime() / 1000) + CHALLENGE_TTL_SECONDS,
    hmacSignatureSecret: secrets.challenge,
    hmacKeySignatureSecret: secrets.key,
  })
}

/** The payload the widget sends (base64 of `{challenge, solution}`), or undefined. */
function parsePayload(token: string): Payload | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as Payload
    const { challenge, solution } = payload ?? {}
    if (
      typeof challenge?.parameters?.nonce !== 'string' ||
      typeof challenge.signature !== 'string' ||
      typeof solution !== 'object' ||
      solution === null
    ) {
      return undefined
    }
    return payload
  } catch {
    return undefined
  }
}

/**
 * Whether `token` answers a challenge this service made for this tenant, unexpired by the
 * service's clock, and was not answered before: the answer is spent only once it proved
 * right, so a wrong one cannot spend another's.
 */
export async function verifyAltcha(
  deps: { config: Pick<Config, 'encryptionKeys'>; clock: Clock; spentCaptchas: SpentOnce },
  tenantId: string,
  token: string,
): Promise<boolean> {
  const payload = parsePayload(token)
  if (!payload) return false
  const now = deps.clock.now().getTime()
  const expiresAt = payload.challenge.parameters.expiresAt
  if (typeof expiresAt !== 'number' || expiresAt * 1000 <= now) return false
  const secrets = secretsOf(deps.config, tenantId)
  const result = await verifySolution({
    challenge: payload.challenge,
    solution: payload.solution,
    deriveKey,
    hmacSignatureSecret: secrets.challenge,
    hmacKeySignatureSecret: secrets.key,
  }).catch(() => undefined)
  if (!result?.verified) return false
  return deps.spentCaptchas.spend(
    `${tenantId}:${payload.challenge.parameters.nonce}`,
    now,
    expiresAt * 1000,
  )
}
