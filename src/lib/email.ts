// Emails (CONTRACT §4 and §8): normalised to NFC, trimmed, and compared case-insensitively,
// so an address spelled with combining marks and one with precomposed letters are one
// account. Control and format characters (zero-width spaces and joiners, bidirectional
// controls, the BOM) are refused: they make two addresses look alike.

/** The address as stored and shown: NFC, without surrounding spaces. */
export function displayEmail(email: string): string {
  return email.normalize('NFC').trim()
}

/** The address as compared: one account per normalised address per tenant. */
export function normalizeEmail(email: string): string {
  return displayEmail(email).toLowerCase().normalize('NFC')
}

// A deliberately plain check: one @, a dotted domain, no spaces. Deliverability is proven
// by mail, not by a regular expression.
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/u
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u

export function isEmail(value: string): boolean {
  if (CONTROL_OR_FORMAT.test(value)) return false
  const v = displayEmail(value)
  return v.length <= 254 && EMAIL_RE.test(v)
}
