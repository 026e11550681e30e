// Email domains of SSO connections (CONTRACT §12): DNS names of two labels or more, folded
// to lowercase, IDNs in their punycode (A-label) form, so "Exämple.COM" and
// "xn--exmple-cua.com" are one domain. An email is routed by the same folding of its part
// after the last "@".
import { domainToASCII } from 'node:url'

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
// domainToASCII parses its input as a URL's host and keeps only that host, so
// "corp.example/x", "corp.example?q", "user@corp.example" or "corp%2eexample" would come
// back as a domain. A domain is written with letters (any script, for IDNs), digits,
// hyphens and dots: anything else (URL delimiters, escapes, spaces, controls) is refused
// before the folding (§12: "anything else is 400 validation").
const DOMAIN_CHARS = /^[\p{L}\p{M}\p{N}.\-\u3002\uFF0E\uFF61]+$/u

/** The domain's canonical form, or undefined when it is not a DNS name of two labels or more. */
export function normalizeDomain(input: string): string | undefined {
  const trimmed = input.trim()
  if (trimmed === '' || trimmed.endsWith('.') || !DOMAIN_CHARS.test(trimmed)) return undefined
  // domainToASCII lowercases, maps (UTS #46) and punycodes; '' when it cannot.
  const ascii = domainToASCII(trimmed.normalize('NFC'))
  if (!ascii || ascii.length > 253) return undefined
  const labels = ascii.split('.')
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return undefined
  // A top-level label is never all digits: refuses IPv4 addresses written as names.
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return undefined
  return ascii
}

/** The routing domain of an email address, or undefined when it has none. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf('@')
  if (at < 1) return undefined
  return normalizeDomain(email.slice(at + 1))
}
