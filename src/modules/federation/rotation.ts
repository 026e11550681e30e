// The SSO connections' OIDC client secrets (sso_connections.oidc_client_secret_enc) as a
// sealed column for `npm run rotate-keys`.
import type { Db } from '../../db/client.ts'
import { findSealedSsoSecrets } from '../../db/cross-tenant.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import type { SealedColumn } from '../../lib/rotation.ts'
import { resealSsoSecret } from './queries.ts'
import { openSsoSecret, sealSsoSecret } from './secret.ts'

interface SealedSsoSecret {
  tenantId: string
  id: string
  sealed: string
}

export function ssoSecretColumn(db: Db, cipher: FieldCipher): SealedColumn<SealedSsoSecret> {
  return {
    scan: async (after, limit) => {
      const rows = await findSealedSsoSecrets(db, after, limit)
      return rows.filter((r): r is SealedSsoSecret => r.sealed !== null)
    },
    sealed: (row) => row.sealed,
    open: (row) => openSsoSecret(cipher, row.tenantId, row.id, row.sealed),
    seal: (row, secret) => sealSsoSecret(cipher, row.tenantId, row.id, secret),
    swap: (row, sealed) => resealSsoSecret(db, row, row.sealed, sealed),
    describe: (row) => `SSO connection ${row.id} of tenant ${row.tenantId} (client secret)`,
  }
}
