// A service provider's SAML 2.0 metadata (OASIS saml-metadata-2.0-os) read into the fields
// of a `saml` application (CONTRACT §22, spMetadataXml "fills the rest"): the SP's
// entityID, its AssertionConsumerServices of the HTTP-POST binding (the default first, then
// by index) with their indexes, its signing certificates and the first NameIDFormat the
// service issues. Only
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
  /** Each HTTP-POST ACS's `index` (SAML Metadata §2.2.3, an xs:unsignedShort). */
  acsIndexes: { index: number; url: string }[]
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

  const all = children(sp, 'AssertionConsumerService')
  const services = all
    .filter((s) => s.getAttribute('Binding') === HTTP_POST)
    .map((s) => ({
      url: s.getAttribute('Location')?.trim() ?? '',
      isDefault: s.getAttribute('isDefault') === 'true',
      index: unsignedShort(s.getAttribute('index')),
    }))
    .filter((s) => s.url)
    .sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || (a.index ?? 0) - (b.index ?? 0))
  const acsUrls = [...new Set(services.map((s) => s.url))]
  if (acsUrls.length === 0) {
    throw new SpMetadataError('no AssertionConsumerService with the HTTP-POST binding')
  }
  // An index names one endpoint of any binding (SAML Metadata §2.2.3): one that two
  // endpoints share (metadata out of the schema) names neither.
  const uses = new Map<number | undefined, number>()
  for (const s of all) {
    const index = unsignedShort(s.getAttribute('index'))
    uses.set(index, (uses.get(index) ?? 0) + 1)
  }
  const acsIndexes = services
    .flatMap((s) =>
      s.index !== undefined && uses.get(s.index) === 1 ? [{ index: s.index, url: s.url }] : [],
    )
    .sort((a, b) => a.index - b.index)

  const spCertificates = signingCertificates(sp)
  const formats = children(sp, 'NameIDFormat').map((f) => f.textContent?.trim() ?? '')
  const nameIdFormat = (Object.keys(NAMEID_FORMATS) as NameIdFormatName[]).find((name) =>
    formats.includes(NAMEID_FORMATS[name]),
  )
  return { entityId, acsUrls, acsIndexes, spCertificates, nameIdFormat }
}

/** An xs:unsignedShort attribute (0..65535), or undefined. */
function unsignedShort(value: string | null): number | undefined {
  if (value === null || !/^\d{1,5}$/.test(value.trim())) return undefined
  const n = Number(value.trim())
  return n <= 65535 ? n : undefined
}
