// The settings of a `saml` application (CONTRACT §22, SAML IdP), from the admin's fields and
// the SP's metadata (which fills what the fields leave out). Each problem is a validation
// issue naming its field, all at once, before anything is written.
import { X509Certificate } from 'node:crypto'
import type { SamlSettings } from '../../db/schema.ts'
import { AppError } from '../../lib/errors.ts'
import { isLoopback } from '../applications/redirect-uris.ts'
import { type NameIdFormatName, parseSpMetadata, SpMetadataError } from './sp-metadata.ts'

export interface SamlInput {
  entityId?: string
  acsUrls?: string[]
  nameIdFormat?: NameIdFormatName
  attributes?: SamlSettings['attributes']
  spCertificates?: string[]
  spMetadataXml?: string
  signResponse?: boolean
}

type Issue = { path: string; message: string }

/** The settings as a response shows them (a row written before acsIndexes has none). */
export const presentSamlSettings = (settings: SamlSettings): Required<SamlSettings> => ({
  ...settings,
  acsIndexes: settings.acsIndexes ?? [],
})

/** Why `raw` cannot be an ACS URL: https, or http on loopback (development). */
export function acsUrlProblem(raw: string): string | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'must be an absolute URL'
  }
  if (raw.includes('#')) return 'must not have a fragment'
  if (url.username || url.password) return 'must not hold credentials'
  if (url.protocol === 'https:') return url.hostname ? undefined : 'must name a host'
  if (url.protocol === 'http:' && isLoopback(url)) return undefined
  return 'must be https (or http on localhost, 127.0.0.1 or [::1])'
}

/** A PEM certificate, normalised, or undefined when it is none. */
export function normalisedCertificate(pem: string): string | undefined {
  try {
    const certificate = new X509Certificate(pem)
    return certificate.toString().trim()
  } catch {
    return undefined
  }
}

/**
 * The settings `input` makes of `current` (none at creation). Throws 400 validation with
 * every issue.
 */
export function resolveSamlSettings(input: SamlInput, current?: SamlSettings): SamlSettings {
  const issues: Issue[] = []
  let fromMetadata: ReturnType<typeof parseSpMetadata> | undefined
  if (input.spMetadataXml !== undefined) {
    try {
      fromMetadata = parseSpMetadata(input.spMetadataXml)
    } catch (error) {
      if (!(error instanceof SpMetadataError)) throw error
      issues.push({ path: 'body.spMetadataXml', message: error.message })
    }
  }
  const entityId = input.entityId ?? fromMetadata?.entityId ?? current?.entityId
  const acsUrls = input.acsUrls ?? fromMetadata?.acsUrls ?? current?.acsUrls
  const indexed = fromMetadata?.acsIndexes ?? current?.acsIndexes ?? []
  const certificates =
    input.spCertificates ?? fromMetadata?.spCertificates ?? current?.spCertificates ?? []
  if (!entityId && issues.length === 0) {
    issues.push({ path: 'body.entityId', message: 'required (or spMetadataXml)' })
  }
  if ((!acsUrls || acsUrls.length === 0) && issues.length === 0) {
    issues.push({ path: 'body.acsUrls', message: 'required (or spMetadataXml)' })
  }
  ;(acsUrls ?? []).forEach((url, i) => {
    const problem = acsUrlProblem(url)
    if (problem) issues.push({ path: `body.acsUrls.${i}`, message: problem })
  })
  const spCertificates = certificates.map((pem, i) => {
    const normalised = normalisedCertificate(pem)
    if (!normalised) {
      issues.push({ path: `body.spCertificates.${i}`, message: 'not a PEM X.509 certificate' })
    }
    return normalised ?? ''
  })
  const attributes = input.attributes ?? current?.attributes ?? []
  const names = new Set<string>()
  attributes.forEach((attribute, i) => {
    if (names.has(attribute.name)) {
      issues.push({ path: `body.attributes.${i}.name`, message: 'named twice' })
    }
    names.add(attribute.name)
  })
  if (issues.length > 0) throw new AppError('validation', { details: { issues } })
  const urls = [...new Set(acsUrls as string[])]
  return {
    entityId: entityId as string,
    acsUrls: urls,
    // The metadata's indexes of the URLs still registered (an ACS the admin removed takes
    // its index with it; one the admin added has none).
    acsIndexes: indexed.filter((entry) => urls.includes(entry.url)),
    nameIdFormat:
      input.nameIdFormat ?? fromMetadata?.nameIdFormat ?? current?.nameIdFormat ?? 'emailAddress',
    attributes,
    spCertificates: [...new Set(spCertificates)],
    signResponse: input.signResponse ?? current?.signResponse ?? false,
  }
}
