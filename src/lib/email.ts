// Emails (CONTRACT §4 and §8): normalised to NFC, trimmed, and compared case-insensitively,
// so an address spelled with combining marks and one with precomposed letters are one
// account. Control and format characters (zero-width spaces and joiners, bidirectional
// controls, the BOM) are refused: they make two addresses look alike.
//
// What an address may be is one regular expression, EMAIL_PATTERN, which the OpenAPI
// document publishes as the email schema's `pattern` (src/schemas.ts): the service accepts
// exactly what the document says. It is written so that it means the same to every JSON
// Schema tool: explicit ranges instead of `\s` or `\p{…}` (whose sets differ between
// ECMAScript and Python), and the few characters beyond U+FFFF as themselves, which JSON
// Schema's Unicode-mode patterns (2020-12 §6.4, Ajv's default) read as one code point each.

/** The address as stored and shown: NFC, without surrounding spaces. */
export function displayEmail(email: string): string {
  return email.normalize('NFC').trim()
}

/** The address as compared: one account per normalised address per tenant. */
export function normalizeEmail(email: string): string {
  return displayEmail(email).toLowerCase().normalize('NFC')
}

/**
 * White space that `trim` removes and that is not itself a control or format character:
 * ECMAScript's WhiteSpace and LineTerminator less Cc (tab, line feed, …) and Cf (the BOM).
 */
const SPACE = '\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000'

/**
 * What no part of an address may hold: `@`, white space, control and format characters
 * (Unicode 17's Cc and Cf; src/lib/email.test.ts holds the list to `\p{Cc}\p{Cf}` of the
 * running Node) and surrogates (a lone one is refused everywhere, CONTRACT §8).
 */
const EXCLUDED =
  '@\\u0000-\\u0020\\u007F-\\u00A0\\u00AD\\u0600-\\u0605\\u061C\\u06DD\\u070F\\u0890\\u0891' +
  '\\u08E2\\u1680\\u180E\\u2000-\\u200F\\u2028-\\u202F\\u205F-\\u2064\\u2066-\\u206F\\u3000' +
  '\\uD800-\\uDFFF\\uFEFF\\uFFF9-\\uFFFB' +
  '\u{110BD}\u{110CD}\u{13430}-\u{1343F}\u{1BCA0}-\u{1BCA3}\u{1D173}-\u{1D17A}\u{E0001}\u{E0020}-\u{E007F}'

/**
 * A deliberately plain rule: 1 to 64 characters, one @, a domain with a dot inside, no
 * spaces inside (those around are trimmed) and none of EXCLUDED. Deliverability is proven
 * by mail, not by a regular expression.
 */
export const EMAIL_PATTERN = `^[${SPACE}]*[^${EXCLUDED}]{1,64}@[^${EXCLUDED}]+\\.[^${EXCLUDED}]+[${SPACE}]*$`

/** At most 254 characters (code points, as JSON Schema's maxLength counts them). */
export const EMAIL_MAX_LENGTH = 254

const EMAIL_RE = new RegExp(EMAIL_PATTERN, 'u')

export function isEmail(value: string): boolean {
  if (value.length > 2 * EMAIL_MAX_LENGTH) return false
  let codePoints = 0
  for (const _ of value) codePoints++
  return codePoints <= EMAIL_MAX_LENGTH && EMAIL_RE.test(value)
}

/**
 * Whether an identity provider's `email_verified` claim says the address is verified
 * (OIDC Core §5.1: a JSON boolean). Only `true` counts, or the string "true" that some
 * providers send (issue 36 P4); "false", "False", 0, null and anything else do not.
 */
export function claimsVerified(value: unknown): boolean {
  return value === true || value === 'true'
}
