// Emails are compared case-insensitively after trimming (CONTRACT §4).

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

// A deliberately plain check: one @, a dotted domain, no spaces or control characters.
// Deliverability is proven by mail, not by a regular expression.
const EMAIL_RE = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u

export function isEmail(value: string): boolean {
  const v = value.trim()
  return v.length <= 254 && EMAIL_RE.test(v)
}
