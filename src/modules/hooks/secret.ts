// A hook's signing secret (CONTRACT §21): a Standard Webhooks secret as a webhook's
// (webhooks/secret.ts), sealed under ENCRYPTION_KEYS and bound to its row by the AAD.
import { hooks } from '../../db/schema.ts'
import { sealedColumn } from '../../db/sealed-column.ts'

/** hooks.secret_enc. */
export const hookSecretColumn = sealedColumn(
  hooks,
  hooks.secretEnc,
  (row) => `hook-secret:${row.tenantId}:${row.id}`,
  { describe: (row) => `hook ${row.id} of tenant ${row.tenantId}` },
)
