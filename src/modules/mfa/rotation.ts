// The TOTP secrets (users.totp_secret_enc) as a sealed column for `npm run rotate-keys`.
import type { Db } from '../../db/client.ts'
import { findSealedSecrets, resealSecret, type SealedSecretRow } from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import type { SealedColumn } from '../../lib/rotation.ts'
import { openTotpSecret, sealTotpSecret } from './totp.ts'

export function totpSecretColumn(db: Db, cipher: FieldCipher): SealedColumn<SealedSecretRow> {
  return {
    scan: (after, limit) => findSealedSecrets(db, after, limit),
    sealed: (row) => row.sealed,
    open: (row) => openTotpSecret(cipher, row.tenantId, row.userId, row.sealed),
    seal: (row, secret) => sealTotpSecret(cipher, row.tenantId, row.userId, secret),
    swap: (row, sealed) => resealSecret(db, row, sealed),
    describe: (row) => `tenant ${row.tenantId} user ${row.userId}`,
  }
}
