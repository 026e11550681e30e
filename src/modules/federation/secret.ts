// The OIDC client secret of an SSO connection (CONTRACT §12): sealed under ENCRYPTION_KEYS
// and bound to its row by the AAD, so a sealed value cannot be moved to another connection.
import { ssoConnections } from '../../db/schema.ts'
import { sealedColumn } from '../../db/sealed-column.ts'
import type { FieldCipher } from '../../lib/crypto.ts'

export const secretAad = (tenantId: string, connectionId: string) =>
  `sso-secret:${tenantId}:${connectionId}`

/** sso_connections.oidc_client_secret_enc. */
export const ssoSecretColumn = sealedColumn(
  ssoConnections,
  ssoConnections.oidcClientSecretEnc,
  (row) => secretAad(row.tenantId, row.id),
  { describe: (row) => `SSO connection ${row.id} of tenant ${row.tenantId} (client secret)` },
)

export function sealSsoSecret(
  cipher: FieldCipher,
  tenantId: string,
  connectionId: string,
  secret: string,
): string {
  return ssoSecretColumn.seal(cipher, { tenantId, id: connectionId }, secret)
}

/** The plaintext, or undefined when no listed key opens it. */
export function openSsoSecret(
  cipher: FieldCipher,
  tenantId: string,
  connectionId: string,
  sealed: string,
): string | undefined {
  return ssoSecretColumn.open(cipher, { tenantId, id: connectionId }, sealed)
}
