// Why an outbound request to a URL a tenant admin configured failed, in words that say what
// kind of failure it was and nothing of where. The library's own message names what the
// service met on its side of the network: `connect ECONNREFUSED 10.1.2.3:8443`, `getaddrinfo
// ENOTFOUND db.internal`, `Hostname/IP does not match certificate's altnames: … DNS:
// internal.corp`. Shown to that admin (a hook's test call and its calls log), it would make
// the service a scanner of the hosts and ports it reaches, and of the names their
// certificates hold. So the admin sees one of a few fixed phrases chosen by the error's
// class, and the error itself goes to the server log only.
import { EgressRefused, EgressTimeout, EgressTooLarge } from './egress.ts'

/** The phrases, one per class of failure (the two of egress.ts's own errors aside). */
export const EGRESS_FAILURES = {
  unresolved: 'the host name could not be resolved',
  connection: 'could not connect to the receiver',
  tls: 'the TLS handshake failed',
  notHttp: 'the answer is not valid HTTP',
  other: 'the request failed',
} as const

// getaddrinfo's and c-ares' codes (node:dns) for a name that has no address.
const DNS_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
  'ENODATA',
  'ESERVFAIL',
  'ENONAME',
])

// A socket that could not be opened, or that closed before an answer.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
  'EPIPE',
])

// OpenSSL's verification codes as Node names them (`CERT_HAS_EXPIRED`,
// `DEPTH_ZERO_SELF_SIGNED_CERT`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, …), Node's own
// (`ERR_TLS_CERT_ALTNAME_INVALID`, `ERR_SSL_WRONG_VERSION_NUMBER`) and EPROTO.
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|EPROTO$|UNABLE_TO_)|CERT/

/**
 * The fixed phrase for `error`: egress.ts's own messages (a refused address, a deadline, an
 * answer too large: none names an address) as they are, the others by their `code` and
 * `syscall`, never by their message.
 */
export function egressFailure(error: unknown): string {
  if (error instanceof EgressRefused) return error.message
  if (error instanceof EgressTimeout || error instanceof EgressTooLarge) return error.message
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException
  if (typeof code !== 'string') return EGRESS_FAILURES.other
  if (DNS_CODES.has(code) || syscall === 'getaddrinfo') return EGRESS_FAILURES.unresolved
  if (TLS_CODE.test(code)) return EGRESS_FAILURES.tls
  if (CONNECTION_CODES.has(code)) return EGRESS_FAILURES.connection
  // llhttp's parse errors (HPE_INVALID_CONSTANT, …): something answered, not in HTTP.
  if (code.startsWith('HPE_')) return EGRESS_FAILURES.notHttp
  return EGRESS_FAILURES.other
}
