// npm run rotate-keys: re-encrypts every field-encrypted secret under the first entry of
// ENCRYPTION_KEYS (CONTRACT §1). To rotate: put the new key first
// (`ENCRYPTION_KEYS=v2:<new>,v1:<old>`), restart the service (new writes use v2, v1 rows
// still decrypt), run this command, and once it reports nothing unreadable, drop v1.
// Exit status: 0 when every secret is under the current key, 1 otherwise.
import { ConfigError, loadConfig } from '../src/config.ts'
import { type Database, openDatabase } from '../src/db/client.ts'
import { FieldCipher } from '../src/lib/crypto.ts'
import { type RotationReport, rotateColumn } from '../src/lib/rotation.ts'
import { applicationSecretColumn } from '../src/modules/applications/rotation.ts'
import { firebaseSignerKeyColumn } from '../src/modules/import/rotation.ts'
import { totpSecretColumn } from '../src/modules/mfa/rotation.ts'
import { idpClientSecretColumn } from '../src/modules/oauth/rotation.ts'

/** Rotates every sealed column of the schema, one after the other. */
export async function rotateKeys(
  database: Database,
  cipher: FieldCipher,
): Promise<{ name: string; report: RotationReport }[]> {
  const { db } = database
  return [
    {
      name: 'users.totp_secret_enc',
      report: await rotateColumn(cipher, totpSecretColumn(db, cipher)),
    },
    {
      name: 'tenants.idp_client_secret_enc',
      report: await rotateColumn(cipher, idpClientSecretColumn(db, cipher)),
    },
    {
      name: 'applications.client_secret_enc',
      report: await rotateColumn(cipher, applicationSecretColumn(db, cipher)),
    },
    {
      name: 'users.password_hash (Firebase signer keys)',
      report: await rotateColumn(cipher, firebaseSignerKeyColumn(db, cipher)),
    },
  ]
}

async function main(): Promise<number> {
  const config = loadConfig(process.env)
  const cipher = new FieldCipher(config.encryptionKeys)
  const database = await openDatabase(config.databaseUrl, config.dataDir)
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
