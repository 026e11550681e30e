// A service provider's SAML 2.0 metadata (OASIS saml-metadata-2.0-os) read into the fields
// of a `saml` application (CONTRACT §22, spMetadataXml "fills the rest"): the SP's
// entityID, its AssertionConsumerServices of the HTTP-POST binding (the default first, then
// by index), its signing certificates and the first NameIDFormat the service issues. Only
// what an admin pasted is read: no DOCTYPE (so no entity expansion), nothing fetched.
import { DOMParser } from '@xmldom/xmldom'
import { certificatePem } from '../federation/saml-metadata.ts'

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const DS = 'http://www.w3.org/2000/09/xmldsig#'
export const HTTP_POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'

export const NAMEID_FORMATS = {
  emailAddress: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
} as const
export type NameIdFormatName = keyof typeof NAMEID_FORMATS

export interface SpMetadata {
  entityId: string
  acsUrls: string[]
  spCertificates: string[]
  nameIdFormat?: NameIdFormatName
}

/** Why metadata was refused; the message is shown to the admin who sent it. */
export class SpMetadataError extends Error {}

/** Parses an EntityDescriptor holding an SPSSODescriptor; throws SpMetadataError. */
export function parseSpMetadata(xml: string): SpMetadata {
  if (/<!DOCTYPE/i.test(xml)) throw new SpMetadataError('metadata must not have a DOCTYPE')
  const problems: string[] = []
  const document = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (message: string) => problems.push(message),
      fatalError: (message: string) => problems.push(message),
    },
  }).parseFromString(xml, 'application/xml')
  if (problems.length > 0 || !document?.documentElement) {
    throw new SpMetadataError('metadata is not well-formed XML')
  }
  const sp = document.getElementsByTagNameNS(MD, 'SPSSODescriptor').item(0)
  if (!sp) throw new SpMetadataError('metadata has no SPSSODescriptor')
  const entity = sp.parentNode as Element | null
  if (!entity || entity.namespaceURI !== MD || entity.localName !== 'EntityDescriptor') {
    throw new SpMetadataError('the SPSSODescriptor is not inside an EntityDescriptor')
  }
  const entityId = entity.getAttribute('entityID')?.trim() ?? ''
  if (!entityId) throw new SpMetadataError('the EntityDescriptor has no entityID')

  const services = children(sp, 'AssertionConsumerService')
    .filter((s) => s.getAttribute('Binding') === HTTP_POST)
    .map((s) => ({
      url: s.getAttribute('Location')?.trim() ?? '',
      isDefault: s.getAttribute('isDefault') === 'true',
      index: Number(s.getAttribute('index') ?? 0) || 0,
    }))
    .filter((s) => s.url)
    .sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.index - b.index)
  const acsUrls = [...new Set(services.map((s) => s.url))]
  if (acsUrls.length === 0) {
    throw new SpMetadataError('no AssertionConsumerService with the HTTP-POST binding')
  }

  const spCertificates: string[] = []
  for (const key of children(sp, 'KeyDescriptor')) {
    const use = key.getAttribute('use')
    if (use && use !== 'signing') continue
    const found = key.getElementsByTagNameNS(DS, 'X509Certificate')
    for (let i = 0; i < found.length; i++) {
      const text = found.item(i)?.textContent?.replace(/\s+/g, '') ?? ''
      if (text) spCertificates.push(certificatePem(text))
    }
  }
  const formats = children(sp, 'NameIDFormat').map((f) => f.textContent?.trim() ?? '')
  const nameIdFormat = (Object.keys(NAMEID_FORMATS) as NameIdFormatName[]).find((name) =>
    formats.includes(NAMEID_FORMATS[name]),
  )
  return { entityId, acsUrls, spCertificates: [...new Set(spCertificates)], nameIdFormat }
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
