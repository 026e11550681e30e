// Key rotation for TOTP secrets (CONTRACT §1, ENCRYPTION_KEYS): every secret not sealed
// under the current (first) key is opened with the key of its version and sealed again
// under the current one. Run by `npm run rotate-keys`; safe to run while the service is
// up and to run again (rows already under the current key are left alone).
import type { Db } from '../../db/client.ts'
import { findSealedSecrets, resealSecret } from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { openTotpSecret, sealTotpSecret } from './totp.ts'

export interface RotationReport {
  /** Re-sealed under the current key. */
  rotated: number
  /** Already under the current key. */
  current: number
  /** Changed by an enrolment while being rotated (the new value is current already). */
  raced: number
  /** Could not be opened with any listed key (a retired key still in use): left as is. */
  unreadable: { tenantId: string; userId: string; version: string }[]
}

const BATCH = 500

export async function rotateTotpSecrets(db: Db, cipher: FieldCipher): Promise<RotationReport> {
  const report: RotationReport = { rotated: 0, current: 0, raced: 0, unreadable: [] }
  let after: { tenantId: string; userId: string } | undefined
  for (;;) {
    const batch = await findSealedSecrets(db, after, BATCH)
    if (batch.length === 0) return report
    for (const row of batch) {
      const version = cipher.versionOf(row.sealed)
      if (version === cipher.currentVersion) {
        report.current++
        continue
      }
      const secret = openTotpSecret(cipher, row.tenantId, row.userId, row.sealed)
      if (secret === undefined) {
        report.unreadable.push({ tenantId: row.tenantId, userId: row.userId, version })
        continue
      }
      const sealed = sealTotpSecret(cipher, row.tenantId, row.userId, secret)
      if (await resealSecret(db, row, sealed)) report.rotated++
      else report.raced++
    }
    after = batch[batch.length - 1]
  }
}
