// npm run migrate: applies pending migrations to DATABASE_URL (or the embedded database).
import { ConfigError, loadConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'

try {
  const config = loadConfig(process.env)
  const database = await openDatabase(config.databaseUrl, config.dataDir, {
    poolMode: config.databasePoolMode,
  })
  await database.migrate()
  await database.close()
  console.log('migrations applied')
} catch (error) {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`config error: ${problem}`)
  } else console.error(error)
  process.exit(1)
}
