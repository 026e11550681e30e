// npm run rotate-keys: re-encrypts every field-encrypted secret under the first entry of
// ENCRYPTION_KEYS (CONTRACT §1). To rotate: put the new key first
// (`ENCRYPTION_KEYS=v2:<new>,v1:<old>`), restart the service (new writes use v2, v1 rows
// still decrypt), run this command, and once it reports nothing unreadable, drop v1.
// Exit status: 0 when every secret is under the current key, 1 otherwise.
import { ConfigError, loadConfig } from '../src/config.ts'
import { type Database, openDatabase } from '../src/db/client.ts'
import { FieldCipher } from '../src/lib/crypto.ts'
import { type RotationReport, rotateColumn } from '../src/lib/rotation.ts'
import { clientSecretColumn } from '../src/modules/applications/secret.ts'
import { captchaSecretColumn } from '../src/modules/captcha/secret.ts'
import { idpClientSecretColumn } from '../src/modules/federation/idp/service.ts'
import { ssoSecretColumn } from '../src/modules/federation/secret.ts'
import { appleKeyColumn } from '../src/modules/federation/social/apple.ts'
import { socialSecretColumn } from '../src/modules/federation/social/secret.ts'
import { hookSecretColumn } from '../src/modules/hooks/secret.ts'
import { signerKeyColumn } from '../src/modules/import/signer-key.ts'
import { totpSecretColumn } from '../src/modules/mfa/totp.ts'
import { webhookSecretColumns } from '../src/modules/webhooks/secret.ts'

/**
 * Every sealed column of the schema (each declared once, by sealedColumn, next to its
 * AAD), by name (table.column). test/tables.test.ts requires every `*_enc` column to be
 * named here.
 */
export const SEALED_COLUMNS = Object.fromEntries(
  [
    totpSecretColumn,
    idpClientSecretColumn,
    clientSecretColumn,
    // Imported Firebase hashes carry their project's signer key sealed inside the hash.
    signerKeyColumn,
    webhookSecretColumns.current,
    webhookSecretColumns.previous,
    ssoSecretColumn,
    socialSecretColumn,
    appleKeyColumn,
    hookSecretColumn,
    captchaSecretColumn,
  ].map((column) => [column.name, column]),
)

/** The names the report uses, where the column alone would mislead. */
const LABELS: Record<string, string> = {
  'users.password_hash': 'users.password_hash (Firebase signer keys)',
}

/** Rotates every sealed column of the schema, one after the other. */
export async function rotateKeys(
  database: Database,
  cipher: FieldCipher,
): Promise<{ name: string; report: RotationReport }[]> {
  const { db } = database
  const reports: { name: string; report: RotationReport }[] = []
  for (const [column, sealed] of Object.entries(SEALED_COLUMNS)) {
    const name = LABELS[column] ?? column
    reports.push({ name, report: await rotateColumn(cipher, sealed.rotation(db, cipher)) })
  }
  return reports
}

async function main(): Promise<number> {
  const config = loadConfig(process.env)
  const cipher = new FieldCipher(config.encryptionKeys)
  const database = await openDatabase(config.databaseUrl, config.dataDir, {
    poolMode: config.databasePoolMode,
  })
  try {
    let ok = true
    for (const { name, report } of await rotateKeys(database, cipher)) {
      const { rotated, current, raced, unreadable } = report
      console.log(
        `${name}: ${rotated} re-encrypted under ${cipher.currentVersion}, ${current} already current, ${raced} changed meanwhile, ${unreadable.length} unreadable`,
      )
      for (const row of unreadable) {
        console.error(
          `${name}: ${row.row} is sealed under ${row.version}, which is not in ENCRYPTION_KEYS`,
        )
      }
      if (unreadable.length > 0) ok = false
    }
    return ok ? 0 : 1
  } finally {
    await database.close()
  }
}

if (import.meta.main) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      if (error instanceof ConfigError) {
        for (const problem of error.problems) console.error(`config error: ${problem}`)
      } else console.error(error)
      process.exit(1)
    },
  )
}
