// A service provider's SAML 2.0 metadata (OASIS saml-metadata-2.0-os) read into the fields
// of a `saml` application (CONTRACT §22, spMetadataXml "fills the rest"): the SP's
// entityID, its AssertionConsumerServices of the HTTP-POST binding (the default first, then
// by index), its signing certificates and the first NameIDFormat the service issues. Only
// what an admin pasted is read: no DOCTYPE (so no entity expansion), nothing fetched.
import { children, metadataDescriptor, signingCertificates } from '../federation/saml-metadata.ts'

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
  const { descriptor: sp, entityId } = metadataDescriptor(xml, 'SPSSODescriptor', (message) => {
    throw new SpMetadataError(message)
  })

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

  const spCertificates = signingCertificates(sp)
  const formats = children(sp, 'NameIDFormat').map((f) => f.textContent?.trim() ?? '')
  const nameIdFormat = (Object.keys(NAMEID_FORMATS) as NameIdFormatName[]).find((name) =>
    formats.includes(NAMEID_FORMATS[name]),
  )
  return { entityId, acsUrls, spCertificates, nameIdFormat }
}
