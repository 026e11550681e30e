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
  if (/<!DOCTYPE/i.test(xml)) throw new MetadataError('metadata must not have a DOCTYPE')
  const problems: string[] = []
  const document = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (message: string) => problems.push(message),
      fatalError: (message: string) => problems.push(message),
    },
  }).parseFromString(xml, 'application/xml')
  if (problems.length > 0 || !document?.documentElement) {
    throw new MetadataError('metadata is not well-formed XML')
  }
  const idp = first(document.getElementsByTagNameNS(MD, 'IDPSSODescriptor'))
  if (!idp) throw new MetadataError('metadata has no IDPSSODescriptor')
  const entity = idp.parentNode as Element | null
  if (!entity || entity.namespaceURI !== MD || entity.localName !== 'EntityDescriptor') {
    throw new MetadataError('the IDPSSODescriptor is not inside an EntityDescriptor')
  }
  const idpEntityId = entity.getAttribute('entityID')?.trim() ?? ''
  if (!idpEntityId) throw new MetadataError('the EntityDescriptor has no entityID')

  const services = children(idp, 'SingleSignOnService')
  const redirect = services.find((s) => s.getAttribute('Binding') === REDIRECT)
  const idpSsoUrl = redirect?.getAttribute('Location')?.trim() ?? ''
  if (!idpSsoUrl) throw new MetadataError('no SingleSignOnService with the HTTP-Redirect binding')

  const idpCertificates: string[] = []
  for (const key of children(idp, 'KeyDescriptor')) {
    const use = key.getAttribute('use')
    if (use && use !== 'signing') continue
    const found = key.getElementsByTagNameNS(DS, 'X509Certificate')
    for (let i = 0; i < found.length; i++) {
      const text = found.item(i)?.textContent?.replace(/\s+/g, '') ?? ''
      if (text) idpCertificates.push(certificatePem(text))
    }
  }
  if (idpCertificates.length === 0) throw new MetadataError('no signing certificate')
  return { idpEntityId, idpSsoUrl, idpCertificates: [...new Set(idpCertificates)] }
}

function first(list: { length: number; item(i: number): Element | null }): Element | undefined {
  return list.length > 0 ? (list.item(0) ?? undefined) : undefined
}

/** The element's own children in the metadata namespace named `name`. */
function children(parent: Element, name: string): Element[] {
  const found: Element[] = []
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    const element = node as Element
    if (node.nodeType === 1 && element.namespaceURI === MD && element.localName === name) {
      found.push(element)
    }
  }
  return found
}
