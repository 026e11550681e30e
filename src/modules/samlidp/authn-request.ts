// An SP's AuthnRequest (SAML Core §3.4.1) as the SSO endpoint receives it, by HTTP-Redirect
// (SAML Bindings §3.4: deflated, base64, the signature over the query string) or HTTP-POST
// (§3.5: base64, the signature enveloped in the request). The request is read from our own
// parse; the SP (found by the Issuer), the ACS (registered, CONTRACT §22) and the signature
// (required when the SP has certificates) are decided by the caller with `verifyRedirect`
// and `verifyPosted`. A refusal throws SamlIdpError with a fixed reason.
import { createPublicKey, verify as verifySignature, X509Certificate } from 'node:crypto'
import { inflateRawSync } from 'node:zlib'
import { SignedXml } from 'xml-crypto'
import { childElements, DS, MAX_REQUEST_BYTES, parseXml, SAML, SAMLP } from './xml.ts'

export const SAML_IDP_REFUSALS = [
  'saml_malformed',
  'saml_unknown_sp',
  'saml_acs_unregistered',
  'saml_request_unsigned',
  'saml_bad_signature',
  'saml_binding_unsupported',
  'saml_wrong_destination',
  'saml_request_expired',
  'saml_request_not_yet_valid',
  'saml_request_replayed',
] as const
export type SamlIdpRefusal = (typeof SAML_IDP_REFUSALS)[number]

export class SamlIdpError extends Error {
  readonly reason: SamlIdpRefusal
  constructor(reason: SamlIdpRefusal, detail?: string) {
    super(detail ? `${reason}: ${detail}` : reason)
    this.reason = reason
  }
}

const refuse = (reason: SamlIdpRefusal, detail?: string): never => {
  throw new SamlIdpError(reason, detail)
}

export interface AuthnRequest {
  id: string
  issuer: string
  /** IssueInstant (SAML Core §3.2.1, required). */
  issueInstant: Date
  /** Destination (SAML Core §3.2.1), if the request names one. */
  destination?: string
  /** AssertionConsumerServiceURL, if the request names one. */
  acsUrl?: string
  /** AssertionConsumerServiceIndex, if the request names one instead. */
  acsIndex?: number
  forceAuthn: boolean
  /** The parsed request, for an enveloped signature's check. */
  document: Document
  xml: string
}

/** SAML Core §1.3.4: an xs:ID is an NCName; bounded, since it comes back in the response. */
const XS_ID = /^[A-Za-z_][A-Za-z0-9_.-]{0,255}$/

/** SAML Core §1.3.3: an xs:dateTime in UTC (`Z`); any fraction of a second. */
const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

/** The request of either binding; `deflated` for HTTP-Redirect. */
export function readAuthnRequest(encoded: string, deflated: boolean): AuthnRequest {
  let bytes: Buffer
  try {
    const raw = Buffer.from(encoded, 'base64')
    bytes = deflated ? inflateRawSync(raw, { maxOutputLength: MAX_REQUEST_BYTES }) : raw
  } catch {
    return refuse('saml_malformed', 'not base64 of a (deflated) request')
  }
  const xml = bytes.toString('utf8')
  const document = parseXml(xml)
  const root = document?.documentElement
  if (!document || !root) return refuse('saml_malformed', 'not well-formed XML')
  if (root.namespaceURI !== SAMLP || root.localName !== 'AuthnRequest') {
    return refuse('saml_malformed', 'not an AuthnRequest')
  }
  const id = root.getAttribute('ID') ?? ''
  if (!XS_ID.test(id)) refuse('saml_malformed', 'no valid ID')
  if (root.getAttribute('Version') !== '2.0') refuse('saml_malformed', 'not SAML 2.0')
  const instant = root.getAttribute('IssueInstant') ?? ''
  const issueInstant = new Date(UTC_INSTANT.test(instant) ? instant : Number.NaN)
  if (Number.isNaN(issueInstant.getTime())) refuse('saml_malformed', 'no valid IssueInstant')
  const issuers = childElements(root, SAML, 'Issuer')
  const issuer = issuers[0]?.textContent?.trim() ?? ''
  if (issuers.length !== 1 || !issuer) refuse('saml_malformed', 'no Issuer')
  const binding = root.getAttribute('ProtocolBinding')
  if (binding && binding !== 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST') {
    refuse('saml_binding_unsupported', 'responses are sent by HTTP-POST only')
  }
  const destination = root.getAttribute('Destination') || undefined
  const acsUrl = root.getAttribute('AssertionConsumerServiceURL') || undefined
  const index = root.getAttribute('AssertionConsumerServiceIndex')
  const acsIndex = index !== null && /^\d{1,5}$/.test(index) ? Number(index) : undefined
  const forceAuthn = ['true', '1'].includes(root.getAttribute('ForceAuthn') ?? '')
  return { id, issuer, issueInstant, destination, acsUrl, acsIndex, forceAuthn, document, xml }
}

/** XMLDSig algorithms accepted (never SHA-1), and Node's digest for each. */
const SIGNATURE_ALGORITHMS: Record<string, { hash: string; ecdsa: boolean }> = {
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': { hash: 'sha256', ecdsa: false },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': { hash: 'sha512', ecdsa: false },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256': { hash: 'sha256', ecdsa: true },
}
const DIGESTS = new Set([
  'http://www.w3.org/2001/04/xmlenc#sha256',
  'http://www.w3.org/2001/04/xmlenc#sha512',
])

/**
 * Whether the request carries a signature, checked or not: by HTTP-Redirect a `Signature`
 * parameter (SAML Bindings §3.4.4.1), by HTTP-POST a ds:Signature in the request (§3.5.4).
 */
export function carriesSignature(
  request: AuthnRequest,
  input: { binding: 'redirect'; rawQuery: string } | { binding: 'post' },
): boolean {
  if (input.binding === 'post') {
    return request.document.getElementsByTagNameNS(DS, 'Signature').length > 0
  }
  return input.rawQuery.split('&').some((part) => part.split('=', 1)[0] === 'Signature')
}

/**
 * SAML Bindings §3.4.4.1: the signature of an HTTP-Redirect request covers the query's
 * `SAMLRequest=…&RelayState=…&SigAlg=…` exactly as sent (still URL-encoded), so it is
 * rebuilt from the raw query string, never from decoded values.
 */
export function verifyRedirect(rawQuery: string, certificates: string[]): void {
  const raw = new Map<string, string>()
  for (const part of rawQuery.split('&')) {
    const eq = part.indexOf('=')
    const name = eq < 0 ? part : part.slice(0, eq)
    if (raw.has(name)) refuse('saml_malformed', `${name} twice`)
    raw.set(name, part)
  }
  const signature = raw.get('Signature')
  const sigAlg = raw.get('SigAlg')
  if (!signature || !sigAlg) throw new SamlIdpError('saml_request_unsigned')
  const algorithm = SIGNATURE_ALGORITHMS[decodeURIComponent(sigAlg.slice('SigAlg='.length))]
  if (!algorithm) throw new SamlIdpError('saml_bad_signature', 'signature algorithm not accepted')
  const signed = ['SAMLRequest', 'RelayState', 'SigAlg']
    .map((name) => raw.get(name))
    .filter((part) => part !== undefined)
    .join('&')
  const value = Buffer.from(decodeURIComponent(signature.slice('Signature='.length)), 'base64')
  const good = certificates.some((pem) => {
    try {
      const key = createPublicKey(
        new X509Certificate(pem).publicKey.export({ format: 'pem', type: 'spki' }),
      )
      return verifySignature(
        algorithm.hash,
        Buffer.from(signed),
        algorithm.ecdsa ? { key, dsaEncoding: 'ieee-p1363' } : key,
        value,
      )
    } catch {
      return false
    }
  })
  if (!good) refuse('saml_bad_signature')
}

/**
 * An HTTP-POST request's enveloped signature (SAML Core §5.4): one ds:Signature, a child of
 * the AuthnRequest, with one Reference to the request's own ID (the only element carrying
 * it), SHA-256 or SHA-512, verified by xml-crypto against one of the SP's certificates.
 * Anything else could be a signature over other bytes than the request we read.
 */
export function verifyPosted(request: AuthnRequest, certificates: string[]): void {
  const root = request.document.documentElement
  const signatures = childElements(root, DS, 'Signature')
  if (signatures.length === 0) throw new SamlIdpError('saml_request_unsigned')
  if (
    signatures.length > 1 ||
    request.document.getElementsByTagNameNS(DS, 'Signature').length > 1
  ) {
    throw new SamlIdpError('saml_bad_signature', 'more than one signature')
  }
  const signature = signatures[0]
  const method = signature.getElementsByTagNameNS(DS, 'SignatureMethod').item(0)
  if (!SIGNATURE_ALGORITHMS[method?.getAttribute('Algorithm') ?? '']) {
    throw new SamlIdpError('saml_bad_signature', 'signature algorithm not accepted')
  }
  const digests = signature.getElementsByTagNameNS(DS, 'DigestMethod')
  const references = signature.getElementsByTagNameNS(DS, 'Reference')
  if (references.length !== 1 || references.item(0)?.getAttribute('URI') !== `#${request.id}`) {
    throw new SamlIdpError('saml_bad_signature', 'the signature does not reference the request')
  }
  for (let i = 0; i < digests.length; i++) {
    if (!DIGESTS.has(digests.item(i)?.getAttribute('Algorithm') ?? '')) {
      throw new SamlIdpError('saml_bad_signature', 'digest algorithm not accepted')
    }
  }
  let withId = 0
  const all = request.document.getElementsByTagName('*')
  for (let i = 0; i < all.length; i++) {
    const element = all.item(i)
    for (const name of ['ID', 'Id', 'id']) if (element?.getAttribute(name) === request.id) withId++
  }
  if (withId !== 1) throw new SamlIdpError('saml_bad_signature', 'the request ID is not unique')
  const good = certificates.some((pem) => {
    try {
      const check = new SignedXml({ publicCert: pem, getCertFromKeyInfo: () => null })
      check.loadSignature(signature as unknown as Node)
      return check.checkSignature(request.xml)
    } catch {
      return false
    }
  })
  if (!good) refuse('saml_bad_signature')
}
