// Key rotation for the tenants' IdP client secrets (CONTRACT §1, ENCRYPTION_KEYS), run by
// `npm run rotate-keys` beside the TOTP secrets: same report, same compare-and-swap.
import type { Db } from '../../db/client.ts'
import { findSealedClientSecrets, resealClientSecret } from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import type { RotationReport } from '../mfa/rotation.ts'
import { secretAad } from './service.ts'

const BATCH = 500

export async function rotateIdpClientSecrets(db: Db, cipher: FieldCipher): Promise<RotationReport> {
  const report: RotationReport = { rotated: 0, current: 0, raced: 0, unreadable: [] }
  let after: string | undefined
  for (;;) {
    const batch = await findSealedClientSecrets(db, after, BATCH)
    if (batch.length === 0) return report
    for (const { tenantId, sealed } of batch) {
      if (!sealed) continue
      const version = cipher.versionOf(sealed)
      if (version === cipher.currentVersion) {
        report.current++
        continue
      }
      let secret: string
      try {
        secret = cipher.decrypt(sealed, secretAad(tenantId))
      } catch {
        report.unreadable.push({ tenantId, userId: '-', version })
        continue
      }
      const resealed = cipher.encrypt(secret, secretAad(tenantId))
      if (await resealClientSecret(db, tenantId, sealed, resealed)) report.rotated++
      else report.raced++
    }
    after = batch[batch.length - 1].tenantId
  }
}
