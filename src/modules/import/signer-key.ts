// The Firebase signer key inside an imported hash (lib/foreign-hashes.ts), sealed to its
// user's row like the TOTP secrets: a copy moved to another row does not open.
import type { FieldCipher } from '../../lib/crypto.ts'
import type { SignerKeySeal } from '../../lib/foreign-hashes.ts'

function aad(tenantId: string, userId: string): string {
  return `users.password_hash:firebase-signer-key:${tenantId}:${userId}`
}

export function signerKeySeal(
  cipher: FieldCipher,
  tenantId: string,
  userId: string,
): SignerKeySeal {
  return {
    seal: (signerKey) => cipher.encrypt(signerKey, aad(tenantId, userId)),
    open: (sealed) => {
      try {
        return cipher.decrypt(sealed, aad(tenantId, userId))
      } catch {
        return undefined
      }
    },
  }
}
