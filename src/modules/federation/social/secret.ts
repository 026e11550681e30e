// A social connection's client secret (CONTRACT §19): sealed under ENCRYPTION_KEYS and bound
// to its row by the AAD, so a sealed value cannot be moved to another connection or tenant.
import { socialConnections } from '../../../db/schema.ts'
import { sealedColumn } from '../../../db/sealed-column.ts'
import type { FieldCipher } from '../../../lib/crypto.ts'

/** social_connections.client_secret_enc. */
export const socialSecretColumn = sealedColumn(
  socialConnections,
  socialConnections.clientSecretEnc,
  (row) => `social-secret:${row.tenantId}:${row.id}`,
  { describe: (row) => `social connection ${row.id} of tenant ${row.tenantId} (client secret)` },
)

export const sealSocialSecret = (
  cipher: FieldCipher,
  tenantId: string,
  id: string,
  secret: string,
) => socialSecretColumn.seal(cipher, { tenantId, id }, secret)

/** The secret, or undefined when no listed key opens it (sealed under a retired key). */
export const openSocialSecret = (
  cipher: FieldCipher,
  tenantId: string,
  id: string,
  sealed: string,
) => socialSecretColumn.open(cipher, { tenantId, id }, sealed)
