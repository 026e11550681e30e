// A tenant's CAPTCHA secret (CONTRACT §21): the third-party provider's secret key, sealed
// under ENCRYPTION_KEYS and bound to its tenant by the AAD, so a sealed value copied to
// another tenant's row opens nowhere. `npm run rotate-keys` re-seals it.
import { tenants } from '../../db/schema.ts'
import { sealedColumn } from '../../db/sealed-column.ts'

export const captchaSecretAad = (tenantId: string) => `${tenantId}:captcha`

/** tenants.captcha_secret_enc (a tenant's row: its key is the tenant's id). */
export const captchaSecretColumn = sealedColumn(
  tenants,
  tenants.captchaSecretEnc,
  (row) => captchaSecretAad(row.tenantId),
  { describe: (row) => `tenant ${row.tenantId}` },
)
