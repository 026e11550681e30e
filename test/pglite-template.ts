// A migrated embedded database, built once per `npm test` and copied into every test
// server. A fresh PGlite runs initdb and every migration (seconds of CPU each time); loading
// a dump of one that already did is several times faster, and the suite starts about fifty.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { type Database, openDatabase, pgliteDatabase, pgliteExtensions } from '../src/db/client.ts'

/** Where scripts/test.ts tells each test process the dump is. */
export const TEMPLATE_ENV = 'TEST_PGLITE_TEMPLATE'

/** Builds the template: an in-memory PGlite with every migration applied, dumped to `path`. */
export async function writeTemplate(path: string): Promise<void> {
  const database = await openDatabase('memory://', '')
  try {
    await database.migrate()
    const client = (database.db as unknown as { $client: PGlite }).$client
    const dump = await client.dumpDataDir('none')
    writeFileSync(path, Buffer.from(await dump.arrayBuffer()))
  } finally {
    await database.close()
  }
}

/**
 * A fresh in-memory database loaded from the template, or undefined when there is none
 * (a test file run on its own): the caller then opens and migrates one the usual way.
 * The app still runs its migrations at start, which finds them all applied.
 */
export async function databaseFromTemplate(): Promise<Database | undefined> {
  const path = process.env[TEMPLATE_ENV]
  if (!path || !existsSync(path)) return undefined
  const loadDataDir = new Blob([readFileSync(path)])
  return pgliteDatabase(new PGlite({ loadDataDir, extensions: await pgliteExtensions() }))
}
