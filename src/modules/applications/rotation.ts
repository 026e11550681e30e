// The applications' client secrets (applications.client_secret_enc) as a sealed column
// for `npm run rotate-keys`.
import type { Db } from '../../db/client.ts'
import { findSealedApplicationSecrets } from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import type { SealedColumn } from '../../lib/rotation.ts'
import { resealApplicationSecret } from './queries.ts'
import { secretAad } from './secret.ts'

interface SealedApplicationSecret {
  tenantId: string
  id: string
  sealed: string
}

export function applicationSecretColumn(
  db: Db,
  cipher: FieldCipher,
): SealedColumn<SealedApplicationSecret> {
  return {
    scan: async (after, limit) => {
      const rows = await findSealedApplicationSecrets(db, after, limit)
      return rows.filter((r): r is SealedApplicationSecret => r.sealed !== null)
    },
    sealed: (row) => row.sealed,
    open: (row) => {
      try {
        return cipher.decrypt(row.sealed, secretAad(row.tenantId, row.id))
      } catch {
        return undefined
      }
    },
    seal: (row, secret) => cipher.encrypt(secret, secretAad(row.tenantId, row.id)),
    swap: (row, sealed) => resealApplicationSecret(db, row, row.sealed, sealed),
    describe: (row) => `application ${row.id} of tenant ${row.tenantId}`,
  }
}
