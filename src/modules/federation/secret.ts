// The OIDC client secret of an SSO connection (CONTRACT §12): sealed under ENCRYPTION_KEYS
// and bound to its row by the AAD, so a sealed value cannot be moved to another connection.
import type { FieldCipher } from '../../lib/crypto.ts'

export const secretAad = (tenantId: string, connectionId: string) =>
  `sso-secret:${tenantId}:${connectionId}`

export function sealSsoSecret(
  cipher: FieldCipher,
  tenantId: string,
  connectionId: string,
  secret: string,
): string {
  return cipher.encrypt(secret, secretAad(tenantId, connectionId))
}

/** The plaintext, or undefined when no listed key opens it. */
export function openSsoSecret(
  cipher: FieldCipher,
  tenantId: string,
  connectionId: string,
  sealed: string,
): string | undefined {
  try {
    return cipher.decrypt(sealed, secretAad(tenantId, connectionId))
  } catch {
    return undefined
  }
}
