// The webhooks' signing secrets (webhooks.secret_enc and, during a rotation's overlap,
// webhooks.previous_secret_enc) as sealed columns for `npm run rotate-keys`.
import type { Db } from '../../db/client.ts'
import { findSealedWebhookSecrets } from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import type { SealedColumn } from '../../lib/rotation.ts'
import { resealWebhookSecret } from './queries.ts'
import { openSecret, type SecretSlot, sealSecret } from './secret.ts'

interface SealedWebhookSecret {
  tenantId: string
  id: string
  sealed: string
}

export function webhookSecretColumn(
  slot: SecretSlot,
): (db: Db, cipher: FieldCipher) => SealedColumn<SealedWebhookSecret> {
  return (db, cipher) => ({
    scan: async (after, limit) => {
      const rows = await findSealedWebhookSecrets(db, slot, after, limit)
      return rows.filter((r): r is SealedWebhookSecret => r.sealed !== null)
    },
    sealed: (row) => row.sealed,
    open: (row) => openSecret(cipher, row.tenantId, row.id, slot, row.sealed),
    seal: (row, secret) => sealSecret(cipher, row.tenantId, row.id, slot, secret),
    swap: (row, sealed) => resealWebhookSecret(db, row, slot, row.sealed, sealed),
    describe: (row) => `webhook ${row.id} of tenant ${row.tenantId} (${slot} secret)`,
  })
}
