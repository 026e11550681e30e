// Client secrets of web and machine apps (CONTRACT §11): 256 random bits, shown once,
// sealed under ENCRYPTION_KEYS (the provider compares the secret a client sends with the
// opened one, in constant time), bound to their row by the AAD so a sealed value copied
// to another application does not open.
import { applications } from '../../db/schema.ts'
import { sealedColumn } from '../../db/sealed-column.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { randomToken } from '../../lib/crypto.ts'
import type { ApplicationType } from './schemas.ts'

export function secretAad(tenantId: string, applicationId: string): string {
  return `application-secret:${tenantId}:${applicationId}`
}

/** applications.client_secret_enc. */
export const clientSecretColumn = sealedColumn(
  applications,
  applications.clientSecretEnc,
  (row) => secretAad(row.tenantId, row.id),
  { describe: (row) => `application ${row.id} of tenant ${row.tenantId}` },
)

/** Confidential clients (they can keep a secret); spa and native apps are public. */
export function hasSecret(type: ApplicationType | string): boolean {
  return type === 'web' || type === 'machine'
}

export function newSecret(): string {
  return randomToken(32)
}

export function sealSecret(
  cipher: FieldCipher,
  tenantId: string,
  applicationId: string,
  secret: string,
) {
  return clientSecretColumn.seal(cipher, { tenantId, id: applicationId }, secret)
}

/** The plaintext, or undefined when no listed key opens it (the client then cannot sign in). */
export function openSecret(
  cipher: FieldCipher,
  tenantId: string,
  applicationId: string,
  sealed: string,
): string | undefined {
  return clientSecretColumn.open(cipher, { tenantId, id: applicationId }, sealed)
}
