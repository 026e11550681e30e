// An identity provider's SAML 2.0 metadata (SAML V2.0 Metadata, OASIS saml-metadata-2.0-os)
// read into the three fields a SAML connection keeps (CONTRACT §12): the IdP's entityID,
// its SingleSignOnService for the HTTP-Redirect binding (AuthnRequests are sent unsigned
// that way), and its signing certificates as PEM. Only what an admin pasted is read: no
// DOCTYPE (so no entity expansion), nothing fetched.
import { DOMParser } from '@xmldom/xmldom'

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const DS = 'http://www.w3.org/2000/09/xmldsig#'
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'

/** The metadata XML is larger than any IdP's needs: refused before parsing. */
export const MAX_METADATA_CHARS = 512 * 1024

export interface IdpMetadata {
  idpEntityId: string
  idpSsoUrl: string
  idpCertificates: string[]
}

/** Why metadata was refused; the message is shown to the admin who sent it. */
export class MetadataError extends Error {}

/** A certificate's base64 body (whitespace ignored) as PEM, 64 characters a line. */
export function certificatePem(base64: string): string {
  const body = base64.replace(/\s+/g, '')
  const lines = body.match(/.{1,64}/g) ?? []
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----`
}

/**
 * The IdP's entityID, HTTP-Redirect SSO URL and signing certificates (KeyDescriptors with
 * use="signing" or no use), from an EntityDescriptor or the first one of an
 * EntitiesDescriptor that has an IDPSSODescriptor. Throws MetadataError otherwise.
 */
export function parseIdpMetadata(xml: string): IdpMetadata {
  if (xml.length > MAX_METADATA_CHARS) throw new MetadataError('metadata is too large')
  const { descriptor: idp, entityId: idpEntityId } = metadataDescriptor(
    xml,
    'IDPSSODescriptor',
    (message) => {
      throw new MetadataError(message)
    },
  )

  const services = children(idp, 'SingleSignOnService')
  const redirect = services.find((s) => s.getAttribute('Binding') === REDIRECT)
  const idpSsoUrl = redirect?.getAttribute('Location')?.trim() ?? ''
  if (!idpSsoUrl) throw new MetadataError('no SingleSignOnService with the HTTP-Redirect binding')

  const idpCertificates = signingCertificates(idp)
  if (idpCertificates.length === 0) throw new MetadataError('no signing certificate')
  return { idpEntityId, idpSsoUrl, idpCertificates }
}

/**
 * The `role` descriptor (IDPSSODescriptor or SPSSODescriptor) of a metadata document, and
 * its EntityDescriptor's entityID: no DOCTYPE (so no entity expansion), well-formed, the
 * descriptor inside an EntityDescriptor. `refuse` throws the caller's error with the reason.
 */
export function metadataDescriptor(
  xml: string,
  role: 'IDPSSODescriptor' | 'SPSSODescriptor',
  refuse: (message: string) => never,
): { descriptor: Element; entityId: string } {
  if (/<!DOCTYPE/i.test(xml)) refuse('metadata must not have a DOCTYPE')
  const problems: string[] = []
  const document = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (message: string) => problems.push(message),
      fatalError: (message: string) => problems.push(message),
    },
  }).parseFromString(xml, 'application/xml')
  if (problems.length > 0 || !document?.documentElement) refuse('metadata is not well-formed XML')
  const found = document.getElementsByTagNameNS(MD, role)
  const descriptor = found.length > 0 ? found.item(0) : null
  if (!descriptor) return refuse(`metadata has no ${role}`)
  const entity = descriptor.parentNode as Element | null
  if (!entity || entity.namespaceURI !== MD || entity.localName !== 'EntityDescriptor') {
    refuse(`the ${role} is not inside an EntityDescriptor`)
  }
  const entityId = entity.getAttribute('entityID')?.trim() ?? ''
  if (!entityId) refuse('the EntityDescriptor has no entityID')
  return { descriptor, entityId }
}

/** The signing certificates (KeyDescriptors with use="signing" or no use) as PEM, each once. */
export function signingCertificates(descriptor: Element): string[] {
  const pems: string[] = []
  for (const key of children(descriptor, 'KeyDescriptor')) {
    const use = key.getAttribute('use')
    if (use && use !== 'signing') continue
    const found = key.getElementsByTagNameNS(DS, 'X509Certificate')
    for (let i = 0; i < found.length; i++) {
      const text = found.item(i)?.textContent?.replace(/\s+/g, '') ?? ''
      if (text) pems.push(certificatePem(text))
    }
  }
  return [...new Set(pems)]
}

/** The element's own children in the metadata namespace named `name`. */
export function children(parent: Element, name: string): Element[] {
  const found: Element[] = []
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    const element = node as Element
    if (node.nodeType === 1 && element.namespaceURI === MD && element.localName === name) {
      found.push(element)
    }
  }
  return found
}
