// TOTP (CONTRACT §5): RFC 6238 with SHA-1, 30-second steps, 6 digits, ±1 step of drift.
// Time comes from deps.clock, never from Date.now, so windows are tested without sleeping.
// Secrets are sealed with AES-256-GCM under ENCRYPTION_KEYS (lib/crypto FieldCipher),
// bound to their row by the AAD `<tenantId>:<userId>`: a sealed secret copied onto another
// user does not open.
import { Secret, TOTP } from 'otpauth'
import { users } from '../../db/schema.ts'
import { sealedColumn } from '../../db/sealed-column.ts'
import type { FieldCipher } from '../../lib/crypto.ts'

export const TOTP_PERIOD = 30
export const TOTP_DIGITS = 6
/** Steps accepted on either side of the current one (clock drift, typing time). */
export const TOTP_WINDOW = 1

/** A new secret: 160 random bits (RFC 4226 §4 recommends 160), in base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32
}

/**
 * The RFC 6238 time step `code` belongs to, or null when it matches no step in the
 * window. The caller must still claim the step, so that it is never accepted twice.
 */
export function matchTotpStep(secretBase32: string, code: string, now: Date): number | null {
  const timestamp = now.getTime()
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secretBase32),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    timestamp,
    window: TOTP_WINDOW,
  })
  if (delta === null) return null
  return TOTP.counter({ period: TOTP_PERIOD, timestamp }) + delta
}

/**
 * CONTRACT §5: `otpauth://totp/<tenant name>:<email>?secret=…&issuer=<tenant name>`
 * (Key Uri Format: label parts and issuer percent-encoded, spaces as %20).
 */
export function otpauthUri(tenantName: string, email: string, secretBase32: string): string {
  const issuer = encodeURIComponent(tenantName)
  return `otpauth://totp/${issuer}:${encodeURIComponent(email)}?secret=${secretBase32}&issuer=${issuer}`
}

/**
 * The URI as an SVG QR code, for enrolment screens. The QR library is loaded by the first
 * enrolment, not by every start (issue 10, resident memory).
 */
export async function qrCodeSvg(uri: string): Promise<string> {
  const { default: QRCode } = await import('qrcode')
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
}

/** users.totp_secret_enc, sealed to its user's row. */
export const totpSecretColumn = sealedColumn(
  users,
  users.totpSecretEnc,
  (row) => `${row.tenantId}:${row.id}`,
  { describe: (row) => `tenant ${row.tenantId} user ${row.id}` },
)

export function sealTotpSecret(
  cipher: FieldCipher,
  tenantId: string,
  userId: string,
  secretBase32: string,
): string {
  return totpSecretColumn.seal(cipher, { tenantId, id: userId }, secretBase32)
}

/**
 * The secret of a sealed column, or undefined when it does not open: sealed for another
 * row, tampered with, or under a key no longer listed in ENCRYPTION_KEYS. Such a factor
 * accepts no code; `npm run rotate-keys` reports rows under unlisted keys.
 */
export function openTotpSecret(
  cipher: FieldCipher,
  tenantId: string,
  userId: string,
  sealed: string,
): string | undefined {
  return totpSecretColumn.open(cipher, { tenantId, id: userId }, sealed)
}

/** The enrolment answer: the secret for manual entry, its URI and a QR code of the URI. */
export async function enrolmentView(tenantName: string, email: string, secretBase32: string) {
  const uri = otpauthUri(tenantName, email, secretBase32)
  return { secret: secretBase32, otpauthUri: uri, qrCodeSvg: await qrCodeSvg(uri) }
}
