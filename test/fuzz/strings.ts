// Hostile strings for the fuzz suite: what a careless or malicious client puts where a
// field, a path segment, a query value or a header is expected (CONTRACT §8 names NUL
// and lone surrogates; the rest are the usual suspects of text handling).
import * as fc from 'fast-check'
import { Ref } from './world.ts'

/** Any UTF-16 code unit, lone surrogates included (fast-check's units never give those). */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))

const SPECIAL = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83dy',
  '\udc00\ud800',
  '%00',
  '%',
  '%zz',
  '%2F',
  '%2e%2e',
  '%ED%A0%80',
  '%C0%AF',
  '..',
  '../..',
  '/',
  '\\',
  '?',
  '#',
  '\t',
  '\u0085',
  '\u2028',
  '\u202e',
  '\u200b',
  '\ufeff',
  '\ufffe',
  '\uffff',
  'e\u0301',
  'İ',
  'ß',
  '💥',
  'null',
  'true',
  '[]',
  '{}',
  '-1',
  '1e309',
  'NaN',
  "' OR '1'='1",
  '$(touch /tmp/x)',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4j-style lookup, as plain text.
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:60Z',
  'a@b.co\u0000',
  'a\ud800@example.com',
  'a\u200b@example.com',
  'ADMIN@EXAMPLE.COM ',
]

/** A few hostile characters, or a long run of one. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 2, arbitrary: fc.string({ unit: codeUnit, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('x', '\u0000', 'é', '💥', '%'), fc.constantFrom(255, 1025, 20_000))
      .map(([c, n]) => c.repeat(n)),
  },
)

/** `valid` with a hostile piece put inside it (or, for a fixture value, around it). */
export function tainted(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, hostileString, fc.nat()).map(([v, bad, at]) => {
    if (v instanceof Ref) return at % 2 ? new Ref(v.key, bad, '') : new Ref(v.key, '', bad)
    const s = String(v)
    const i = at % (s.length + 1)
    return s.slice(0, i) + bad + s.slice(i)
  })
}

/** The bytes of `s` in UTF-8, except that a lone surrogate keeps its 3-byte (WTF-8) form. */
export function wtf8(s: string): Buffer {
  const bytes: number[] = []
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i)
    const next = s.charCodeAt(i + 1)
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00)
      i++
    }
    if (c < 0x80) bytes.push(c)
    else if (c < 0x800) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 63))
    else if (c < 0x10000) bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
    else {
      bytes.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
    }
  }
  return Buffer.from(bytes)
}

/** How a value goes into a URL: escaped byte by byte, or its bytes as they are. */
export type UrlEncoding = 'escaped' | 'raw'

export function urlPart(value: string, how: UrlEncoding): string {
  const bytes = wtf8(value)
  if (how === 'raw') return bytes.toString('latin1')
  let out = ''
  for (const b of bytes) {
    const c = String.fromCharCode(b)
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** A header value as bytes: UTF-8, with CR and LF (which would end the line) made spaces. */
export function headerValue(value: string): string {
  return wtf8(value)
    .toString('latin1')
    .replace(/[\r\n]/g, ' ')
}
