// The service as a SAML 2.0 service provider (CONTRACT §12, SP side and "SAML is strict").
// @node-saml/node-saml builds the AuthnRequest and the SP metadata and verifies the XML
// signature (it returns only the bytes the signature covers). Everything a signature does not
// decide is checked here, on our own parse, with the caller's clock: that the response holds
// exactly one assertion and it is the signed one (signature wrapping: we do not rely on the
// library alone), the algorithms, Issuer, Audience, Recipient, Destination, InResponseTo and
// the validity windows. A refusal throws SamlError with a fixed `reason`.
import { randomBytes } from 'node:crypto'
import { SAML, type SamlConfig } from '@node-saml/node-saml'
import { DOMParser } from '@xmldom/xmldom'
import { refuse, SamlError, samlTimes } from './saml-checks.ts'

export { SAML_CLOCK_SKEW_MS, SamlError, type SamlRefusal } from './saml-checks.ts'

/** The IdP side of a SAML connection, as stored (CONTRACT §12). */
export interface SamlIdp {
  idpEntityId: string
  idpSsoUrl: string
  /** PEM certificates; a signature by any of them is accepted (rollover). */
  idpCertificates: string[]
}

/** Our side: entityID `{PUBLIC_URL}/v1/{slug}/sso/{id}`, ACS `…/saml/acs`. */
export interface SamlSp {
  entityId: string
  acsUrl: string
}

export interface SamlAssertion {
  assertionId: string
  nameId: string
  nameIdFormat: string | null
  email: string
  attributes: Record<string, string[]>
  /** The signed AuthnStatement's AuthnContextClassRef, if any. */
  authnContextClassRef: string | null
  /** Whether that class is a multi-factor one (MFA_CONTEXT_CLASSES). */
  mfa: boolean
  /**
   * The earlier of the two NotOnOrAfter (Conditions, SubjectConfirmationData): the assertion
   * is refused from notOnOrAfter + SAML_CLOCK_SKEW_MS on, so its ID need be remembered
   * (replay) until then.
   */
  notOnOrAfter: Date
}

export const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'
/** The attributes that may carry the email, in order (CONTRACT §12, Identity). */
export const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
] as const

/**
 * AuthnContext classes that say a second factor was used: SAML 2.0's two-factor classes
 * (saml-authn-context-2.0-os §3.4), REFEDS MFA, and Microsoft Entra's multipleauthn.
 */
export const MFA_CONTEXT_CLASSES = new Set([
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken',
  'https://refeds.org/profile/mfa',
  'http://schemas.microsoft.com/claims/multipleauthn',
])

const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol'
const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion'
const DS = 'http://www.w3.org/2000/09/xmldsig#'
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
/** SHA-256 or stronger, signature and digest alike (CONTRACT §12); SHA-1 and HMAC refused. */
const SIGNATURE_METHODS = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
])
const DIGEST_METHODS = new Set([
  'http://www.w3.org/2001/04/xmlenc#sha256',
  'http://www.w3.org/2001/04/xmlenc#sha512',
])
/** A POSTed SAMLResponse is a few KiB; anything far larger is not one. */
const MAX_RESPONSE_BASE64 = 256 * 1024

function library(idp: SamlIdp, sp: SamlSp, extra: Partial<SamlConfig> = {}): SAML {
  return new SAML({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    entryPoint: idp.idpSsoUrl,
    idpCert: idp.idpCertificates.length > 0 ? idp.idpCertificates : ['-'],
    identifierFormat: NAMEID_EMAIL,
    // The IdP decides how to authenticate; a requested context would refuse some IdPs.
    disableRequestedAuthnContext: true,
    // Either the Response or the Assertion signed; our checks below decide the rest.
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    // Times, audience and InResponseTo are checked below with the caller's clock and
    // request, so that each refusal has its own reason.
    acceptedClockSkewMs: -1,
    audience: false,
    validateInResponseTo: 'never' as SamlConfig['validateInResponseTo'],
    ...extra,
  })
}

/** The SP metadata a tenant hands its IdP (HTTP-POST ACS, unsigned AuthnRequests). */
export function spMetadataXml(sp: SamlSp): string {
  const saml = library({ idpEntityId: '', idpSsoUrl: sp.acsUrl, idpCertificates: [] }, sp, {
    wantAssertionsSigned: true,
  })
  return saml.generateServiceProviderMetadata(null, null)
}

/**
 * An unsigned AuthnRequest by HTTP-Redirect (deflated, in the query), NameIDPolicy
 * emailAddress. The caller binds `requestId` to the browser (CONTRACT §12).
 */
export async function authnRequestRedirect(
  idp: SamlIdp,
  sp: SamlSp,
  relayState: string,
): Promise<{ url: string; requestId: string }> {
  // An xs:ID starts with a letter or underscore.
  const requestId = `_${randomBytes(20).toString('hex')}`
  const saml = library(idp, sp, { generateUniqueId: () => requestId })
  const url = await saml.getAuthorizeUrlAsync(relayState, undefined, {})
  return { url, requestId }
}

function parse(samlResponseBase64: string): Element {
  if (samlResponseBase64.length > MAX_RESPONSE_BASE64) refuse('saml_malformed')
  const xml = Buffer.from(samlResponseBase64, 'base64').toString('utf8')
  // No DTDs: no entity expansion, no internal subset to hide markup in.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) refuse('saml_malformed')
  const problems: string[] = []
  let root: Element | null = null
  try {
    root = new DOMParser({
      errorHandler: (level: string, message: string) => {
        if (level !== 'warning') problems.push(message)
      },
    }).parseFromString(xml, 'text/xml').documentElement
  } catch (error) {
    refuse('saml_malformed', error)
  }
  if (problems.length > 0 || !root) refuse('saml_malformed')
  return root
}

function children(parent: Element, ns: string, name: string): Element[] {
  const found: Element[] = []
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    const el = node as Element
    if (node.nodeType === 1 && el.namespaceURI === ns && el.localName === name) found.push(el)
  }
  return found
}

function child(parent: Element | undefined, ns: string, name: string): Element | undefined {
  if (!parent) return undefined
  const found = children(parent, ns, name)
  if (found.length > 1) refuse('saml_malformed')
  return found[0]
}

/** Elements of this local name anywhere, in any namespace (or none). */
function anywhere(root: Element, name: string): Element[] {
  return Array.from(root.getElementsByTagNameNS('*', name)) as Element[]
}

/** The shape checks that come before any signature is looked at. */
function checkShape(root: Element): Element {
  if (root.namespaceURI !== SAMLP || root.localName !== 'Response') refuse('saml_malformed')
  // Exactly one Response and one Assertion in the whole document, the Assertion a child of
  // the Response: every signature-wrapping variant moves or copies one of them somewhere.
  if (anywhere(root, 'Response').length !== 0) refuse('saml_wrapped')
  if (anywhere(root, 'EncryptedAssertion').length !== 0) refuse('saml_encrypted_assertion')
  const assertions = anywhere(root, 'Assertion')
  if (assertions.length === 0) {
    const status = child(child(root, SAMLP, 'Status'), SAMLP, 'StatusCode')
    if (status && status.getAttribute('Value') !== SUCCESS) refuse('saml_idp_status')
    refuse('saml_no_assertion')
  }
  const [assertion] = assertions
  if (assertions.length !== 1 || assertion.parentNode !== root) refuse('saml_wrapped')
  if (assertion.namespaceURI !== SAML_NS) refuse('saml_wrapped')
  const status = child(child(root, SAMLP, 'Status'), SAMLP, 'StatusCode')
  if (status?.getAttribute('Value') !== SUCCESS) refuse('saml_idp_status')
  // Weak algorithms anywhere refuse the whole response, whichever signature they belong to.
  for (const method of anywhere(root, 'SignatureMethod')) {
    if (!SIGNATURE_METHODS.has(method.getAttribute('Algorithm') ?? ''))
      refuse('saml_weak_algorithm')
  }
  for (const method of anywhere(root, 'DigestMethod')) {
    if (!DIGEST_METHODS.has(method.getAttribute('Algorithm') ?? '')) refuse('saml_weak_algorithm')
  }
  // Both ends of validity are required; read again from the signed bytes after verification.
  const conditions = child(assertion, SAML_NS, 'Conditions')
  const confirmations = anywhere(assertion, 'SubjectConfirmationData')
  for (const el of [conditions, ...confirmations]) {
    if (!el?.getAttribute('NotOnOrAfter')) refuse('saml_expired')
  }
  const signatures = anywhere(root, 'Signature').filter((s) => s.namespaceURI === DS)
  if (signatures.length === 0) refuse('saml_unsigned')
  return assertion
}

function text(el: Element | undefined): string {
  // textContent joins every text node: a comment inside a NameID cannot cut it short.
  return (el?.textContent ?? '').trim()
}

/**
 * Validates a POSTed SAMLResponse for the AuthnRequest `requestId` at `now`, and answers the
 * identity it asserts. Throws SamlError (with `reason`) on any refusal.
 */
export async function validateSamlResponse(
  idp: SamlIdp,
  sp: SamlSp,
  samlResponseBase64: string,
  opts: { requestId: string; now: Date },
): Promise<SamlAssertion> {
  const root = parse(samlResponseBase64)
  const documentAssertion = checkShape(root)
  if (idp.idpCertificates.length === 0) refuse('saml_signature_invalid')

  let signedXml: string
  try {
    const { profile } = await library(idp, sp).validatePostResponseAsync({
      SAMLResponse: samlResponseBase64,
    })
    if (!profile) refuse('saml_no_assertion')
    signedXml = profile.getAssertionXml?.() ?? ''
  } catch (error) {
    if (error instanceof SamlError) throw error
    refuse('saml_signature_invalid', error)
  }
  // From here on only what the signature covers is read (and the Response's own attributes,
  // which are compared with values we know).
  const signed = parse(Buffer.from(signedXml).toString('base64'))
  if (signed.namespaceURI !== SAML_NS || signed.localName !== 'Assertion') refuse('saml_wrapped')
  const assertionId = signed.getAttribute('ID') ?? ''
  if (!assertionId || assertionId !== documentAssertion.getAttribute('ID')) refuse('saml_wrapped')
  if (anywhere(signed, 'Assertion').length !== 0) refuse('saml_wrapped')

  if (text(child(signed, SAML_NS, 'Issuer')) !== idp.idpEntityId) refuse('saml_issuer')
  if (root.getAttribute('Destination') !== sp.acsUrl) refuse('saml_destination')
  const inResponseTo = root.getAttribute('InResponseTo')
  if (!inResponseTo) refuse('saml_unsolicited')
  if (inResponseTo !== opts.requestId) refuse('saml_in_response_to')

  const subject = child(signed, SAML_NS, 'Subject')
  const nameIdEl = child(subject, SAML_NS, 'NameID')
  const nameId = text(nameIdEl)
  if (!nameId) refuse('saml_no_subject')
  const bearer = subject
    ? children(subject, SAML_NS, 'SubjectConfirmation').filter(
        (c) => c.getAttribute('Method') === BEARER,
      )
    : []
  if (bearer.length !== 1) refuse('saml_no_subject')
  const confirmation = child(bearer[0], SAML_NS, 'SubjectConfirmationData')
  if (!confirmation) refuse('saml_no_subject')
  if (confirmation.getAttribute('Recipient') !== sp.acsUrl) refuse('saml_recipient')
  const confirmedFor = confirmation.getAttribute('InResponseTo')
  if (!confirmedFor) refuse('saml_unsolicited')
  if (confirmedFor !== opts.requestId) refuse('saml_in_response_to')

  const conditions = child(signed, SAML_NS, 'Conditions')
  if (!conditions) refuse('saml_audience')
  const restrictions = children(conditions, SAML_NS, 'AudienceRestriction')
  // Every AudienceRestriction must name us (SAML core 2.5.1.4: they all apply).
  if (
    restrictions.length === 0 ||
    !restrictions.every((r) =>
      children(r, SAML_NS, 'Audience').some((a) => text(a) === sp.entityId),
    )
  ) {
    refuse('saml_audience')
  }
  const notOnOrAfter = samlTimes(opts.now, conditions, confirmation)

  const attributes: Record<string, string[]> = {}
  for (const statement of children(signed, SAML_NS, 'AttributeStatement')) {
    for (const attribute of children(statement, SAML_NS, 'Attribute')) {
      const name = attribute.getAttribute('Name') ?? ''
      const values = children(attribute, SAML_NS, 'AttributeValue').map(text)
      if (name && !(name in attributes)) attributes[name] = values
    }
  }
  const nameIdFormat = nameIdEl?.getAttribute('Format') || null
  const email =
    nameIdFormat === NAMEID_EMAIL
      ? nameId
      : (EMAIL_ATTRIBUTES.map((name) => attributes[name]?.[0]).find((v) => v) ?? '')
  if (!email) refuse('saml_no_email')
  const contexts = children(signed, SAML_NS, 'AuthnStatement').flatMap((statement) =>
    children(statement, SAML_NS, 'AuthnContext').flatMap((context) =>
      children(context, SAML_NS, 'AuthnContextClassRef').map(text),
    ),
  )
  const authnContextClassRef = contexts[0] || null
  const mfa = contexts.length > 0 && contexts.every((c) => MFA_CONTEXT_CLASSES.has(c))
  return {
    assertionId,
    nameId,
    nameIdFormat,
    email,
    attributes,
    authnContextClassRef,
    mfa,
    notOnOrAfter,
  }
}

/**
 * The Response's InResponseTo, read before any check so that the ACS can find the request
 * this browser has outstanding; validateSamlResponse then holds the signed assertion to it.
 */
export function responseInResponseTo(samlResponseBase64: string): string | undefined {
  try {
    return parse(samlResponseBase64).getAttribute('InResponseTo') || undefined
  } catch {
    return undefined
  }
}
