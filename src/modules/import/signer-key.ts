// The Firebase signer key inside an imported hash (lib/foreign-hashes.ts), sealed to its
// user's row like the TOTP secrets: a copy moved to another row does not open.

import { sql } from '../../db/orm.ts'
import { users } from '../../db/schema.ts'
import { sealedColumn } from '../../db/sealed-column.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import {
  type SignerKeySeal,
  sealedSignerKey,
  withSealedSignerKey,
} from '../../lib/foreign-hashes.ts'

/**
 * users.password_hash of imported Firebase hashes: the whole stored hash is the row's
 * value, and only the sealed signer key at its end is opened and sealed again.
 */
export const signerKeyColumn = sealedColumn(
  users,
  users.passwordHash,
  (row) => `users.password_hash:firebase-signer-key:${row.tenantId}:${row.id}`,
  {
    describe: (row) => `tenant ${row.tenantId} user ${row.id}`,
    holds: sql`${users.passwordHash} LIKE '$firebase-scrypt$%'`,
    within: { get: sealedSignerKey, put: withSealedSignerKey },
  },
)

export function signerKeySeal(
  cipher: FieldCipher,
  tenantId: string,
  userId: string,
): SignerKeySeal {
  const key = { tenantId, id: userId }
  return {
    seal: (signerKey) => signerKeyColumn.seal(cipher, key, signerKey),
    open: (sealed) => signerKeyColumn.open(cipher, key, sealed),
  }
}
