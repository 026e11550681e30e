// The tenants' IdP client secrets (tenants.idp_client_secret_enc) as a sealed column for
// `npm run rotate-keys`.
import type { Db } from '../../db/client.ts'
import { findSealedClientSecrets, resealClientSecret } from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import type { SealedColumn } from '../../lib/rotation.ts'
import { secretAad } from './service.ts'

interface SealedClientSecret {
  tenantId: string
  sealed: string
}

export function idpClientSecretColumn(
  db: Db,
  cipher: FieldCipher,
): SealedColumn<SealedClientSecret> {
  return {
    scan: async (after, limit) => {
      const rows = await findSealedClientSecrets(db, after?.tenantId, limit)
      return rows.filter((r): r is SealedClientSecret => r.sealed !== null)
    },
    sealed: (row) => row.sealed,
    open: (row) => {
      try {
        return cipher.decrypt(row.sealed, secretAad(row.tenantId))
      } catch {
        return undefined
      }
    },
    seal: (row, secret) => cipher.encrypt(secret, secretAad(row.tenantId)),
    swap: (row, sealed) => resealClientSecret(db, row.tenantId, row.sealed, sealed),
    describe: (row) => `tenant ${row.tenantId}`,
  }
}
