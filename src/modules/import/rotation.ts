// The Firebase signer keys sealed inside imported hashes (users.password_hash) as a sealed
// column for `npm run rotate-keys`. A row's value is its whole stored hash; only the sealed
// key at its end is opened and sealed again.
import type { Db } from '../../db/client.ts'
import {
  findFirebaseHashes,
  replaceFirebaseHash,
  type SealedSecretRow,
} from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { sealedSignerKey, withSealedSignerKey } from '../../lib/foreign-hashes.ts'
import type { SealedColumn } from '../../lib/rotation.ts'
import { signerKeySeal } from './signer-key.ts'

export function firebaseSignerKeyColumn(
  db: Db,
  cipher: FieldCipher,
): SealedColumn<SealedSecretRow> {
  const seal = (row: SealedSecretRow) => signerKeySeal(cipher, row.tenantId, row.userId)
  return {
    scan: (after, limit) => findFirebaseHashes(db, after, limit),
    sealed: (row) => sealedSignerKey(row.sealed) ?? '',
    open: (row) => seal(row).open(sealedSignerKey(row.sealed) ?? ''),
    seal: (row, signerKey) => withSealedSignerKey(row.sealed, seal(row).seal(signerKey)),
    swap: (row, passwordHash) => replaceFirebaseHash(db, row, passwordHash),
    describe: (row) => `tenant ${row.tenantId} user ${row.userId}`,
  }
}
