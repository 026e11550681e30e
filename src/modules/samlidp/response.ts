// The SAML Response the IdP posts to an SP's ACS (SAML Core §3.3.3, Web Browser SSO Profile
// §4.1.4.2): Issuer, Success, and one assertion with the bearer SubjectConfirmation (Recipient
// the ACS, NotOnOrAfter, InResponseTo of an SP-initiated sign-in), Conditions (five minutes
// at most, CONTRACT §22; Audience the SP's entity id), the AuthnStatement and the
// attributes. Built with @xmldom/xmldom (every value a text node or an attribute, escaped by
// the serializer, never spliced into markup) and signed with xml-crypto: the assertion
// always, the Response too when the application asks (signResponse); enveloped signatures,
// exclusive c14n, RSA-SHA256 and SHA-256, placed after the Issuer as the schema orders it.
import { randomBytes } from 'node:crypto'
import { DOMImplementation, XMLSerializer } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'
import type { SamlSigningKey } from './keys.ts'
import { ENVELOPED, EXC_C14N, RSA_SHA256, SAML, SAMLP, SHA256 } from './xml.ts'

/** CONTRACT §22: the assertion is good for five minutes. */
export const ASSERTION_LIFETIME_MS = 5 * 60 * 1000
/** An SP whose clock is a little ahead still accepts the assertion at once. */
const NOT_BEFORE_SKEW_MS = 30 * 1000

const PASSWORD_CONTEXT = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'
const MFA_CONTEXT = 'https://refeds.org/profile/mfa'
const BASIC_ATTRIBUTE = 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic'
const XSI = 'http://www.w3.org/2001/XMLSchema-instance'
const XS = 'http://www.w3.org/2001/XMLSchema'

export interface SamlResponseInput {
  idpEntityId: string
  spEntityId: string
  acsUrl: string
  /** The AuthnRequest's ID; none for an IdP-initiated sign-in. */
  inResponseTo?: string
  nameId: string
  nameIdFormat: string
  /** The service session the assertion comes from (its SessionIndex). */
  sessionIndex: string
  authnInstant: Date
  mfa: boolean
  attributes: { name: string; values: string[] }[]
  signResponse: boolean
  key: SamlSigningKey
  now: Date
}

/** A fresh xs:ID: a letter first (an NCName), then 160 random bits. */
const newId = () => `_${randomBytes(20).toString('hex')}`
const instant = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z')

export function buildSamlResponse(input: SamlResponseInput): string {
  const document = new DOMImplementation().createDocument(SAMLP, 'samlp:Response', null)
  const response = document.documentElement as unknown as Element
  const el = (parent: Element, ns: string, name: string, attrs: Record<string, string> = {}) => {
    const child = document.createElementNS(ns, name) as unknown as Element
    for (const [key, value] of Object.entries(attrs)) child.setAttribute(key, value)
    parent.appendChild(child)
    return child
  }
  const text = (parent: Element, value: string) => {
    parent.appendChild(document.createTextNode(value) as unknown as Node)
    return parent
  }
  const now = input.now
  const until = instant(new Date(now.getTime() + ASSERTION_LIFETIME_MS))
  const replyTo: Record<string, string> = input.inResponseTo
    ? { InResponseTo: input.inResponseTo }
    : {}
  response.setAttributeNS('http://www.w3.org/2000/xmlns/', 'xmlns:saml', SAML)
  for (const [key, value] of Object.entries({
    ID: newId(),
    Version: '2.0',
    IssueInstant: instant(now),
    Destination: input.acsUrl,
    ...replyTo,
  })) {
    response.setAttribute(key, value)
  }
  text(el(response, SAML, 'saml:Issuer'), input.idpEntityId)
  const status = el(response, SAMLP, 'samlp:Status')
  el(status, SAMLP, 'samlp:StatusCode', { Value: 'urn:oasis:names:tc:SAML:2.0:status:Success' })

  const assertion = el(response, SAML, 'saml:Assertion', {
    ID: newId(),
    Version: '2.0',
    IssueInstant: instant(now),
  })
  text(el(assertion, SAML, 'saml:Issuer'), input.idpEntityId)
  const subject = el(assertion, SAML, 'saml:Subject')
  text(el(subject, SAML, 'saml:NameID', { Format: input.nameIdFormat }), input.nameId)
  const confirmation = el(subject, SAML, 'saml:SubjectConfirmation', {
    Method: 'urn:oasis:names:tc:SAML:2.0:cm:bearer',
  })
  el(confirmation, SAML, 'saml:SubjectConfirmationData', {
    NotOnOrAfter: until,
    Recipient: input.acsUrl,
    ...replyTo,
  })
  const conditions = el(assertion, SAML, 'saml:Conditions', {
    NotBefore: instant(new Date(now.getTime() - NOT_BEFORE_SKEW_MS)),
    NotOnOrAfter: until,
  })
  text(
    el(el(conditions, SAML, 'saml:AudienceRestriction'), SAML, 'saml:Audience'),
    input.spEntityId,
  )
  const authn = el(assertion, SAML, 'saml:AuthnStatement', {
    AuthnInstant: instant(input.authnInstant),
    SessionIndex: input.sessionIndex,
  })
  text(
    el(el(authn, SAML, 'saml:AuthnContext'), SAML, 'saml:AuthnContextClassRef'),
    input.mfa ? MFA_CONTEXT : PASSWORD_CONTEXT,
  )
  const present = input.attributes.filter((a) => a.values.length > 0)
  if (present.length > 0) {
    const statement = el(assertion, SAML, 'saml:AttributeStatement')
    statement.setAttributeNS('http://www.w3.org/2000/xmlns/', 'xmlns:xs', XS)
    statement.setAttributeNS('http://www.w3.org/2000/xmlns/', 'xmlns:xsi', XSI)
    for (const attribute of present) {
      const node = el(statement, SAML, 'saml:Attribute', {
        Name: attribute.name,
        NameFormat: BASIC_ATTRIBUTE,
      })
      for (const value of attribute.values) {
        text(el(node, SAML, 'saml:AttributeValue', { 'xsi:type': 'xs:string' }), value)
      }
    }
  }
  let xml = new XMLSerializer().serializeToString(document as unknown as Node)
  xml = sign(xml, input.key, "//*[local-name(.)='Assertion']")
  if (input.signResponse) xml = sign(xml, input.key, "/*[local-name(.)='Response']")
  return xml
}

/** An enveloped signature of the element at `xpath`, placed right after its Issuer. */
function sign(xml: string, key: SamlSigningKey, xpath: string): string {
  const signer = new SignedXml({
    privateKey: key.privateKey,
    publicCert: key.certificate,
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
  })
  signer.addReference({
    xpath,
    transforms: [ENVELOPED, EXC_C14N],
    digestAlgorithm: SHA256,
  })
  signer.computeSignature(xml, {
    prefix: 'ds',
    location: { reference: `${xpath}/*[local-name(.)='Issuer']`, action: 'after' },
  })
  return signer.getSignedXml()
}
