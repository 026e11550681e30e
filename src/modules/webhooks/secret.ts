// Webhook signing secrets (CONTRACT §13): `whsec_` and the base64 of 32 random bytes, as
// Standard Webhooks writes them; shown once, sealed under ENCRYPTION_KEYS and bound to
// their row (and to which of the two slots they sit in) by the AAD.
import { createHmac, randomBytes } from 'node:crypto'
import { webhooks } from '../../db/schema.ts'
import { sealedColumn } from '../../db/sealed-column.ts'
import type { FieldCipher } from '../../lib/crypto.ts'

export const SECRET_PREFIX = 'whsec_'

export type SecretSlot = 'current' | 'previous'

export function secretAad(tenantId: string, webhookId: string, slot: SecretSlot): string {
  return `webhook-secret:${slot}:${tenantId}:${webhookId}`
}

const slotColumn = (slot: SecretSlot) =>
  sealedColumn(
    webhooks,
    slot === 'current' ? webhooks.secretEnc : webhooks.previousSecretEnc,
    (row) => secretAad(row.tenantId, row.id, slot),
    { describe: (row) => `webhook ${row.id} of tenant ${row.tenantId} (${slot} secret)` },
  )

/** webhooks.secret_enc and, during a rotation's overlap, webhooks.previous_secret_enc. */
export const webhookSecretColumns = {
  current: slotColumn('current'),
  previous: slotColumn('previous'),
} as const

export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

/** The key HMAC signs with: the secret's base64 part, decoded. */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
}

export function sealSecret(
  cipher: FieldCipher,
  tenantId: string,
  webhookId: string,
  slot: SecretSlot,
  secret: string,
): string {
  return webhookSecretColumns[slot].seal(cipher, { tenantId, id: webhookId }, secret)
}

/** The plaintext, or undefined when no listed key opens it. */
export function openSecret(
  cipher: FieldCipher,
  tenantId: string,
  webhookId: string,
  slot: SecretSlot,
  sealed: string,
): string | undefined {
  return webhookSecretColumns[slot].open(cipher, { tenantId, id: webhookId }, sealed)
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` with the secret's decoded bytes. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`)
  return `v1,${mac.digest('base64')}`
}
