// npm run purge: removes users soft-deleted more than USER_RETENTION_DAYS ago (default 30)
// from DATABASE_URL (or the embedded database), once, recording UserHardDeleted for each.
// The service also does this hourly; this command is for cron jobs and operators.
import { ConfigError, loadConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'
import { systemClock } from '../src/lib/clock.ts'
import { AuditRecorder } from '../src/modules/audit/recorder.ts'
import { purgeUsers } from '../src/modules/users/admin-purge.ts'

try {
  const config = loadConfig(process.env)
  const database = await openDatabase(config.databaseUrl, config.dataDir)
  try {
    await database.migrate()
    const count = await purgeUsers({
      db: database.db,
      clock: systemClock,
      audit: new AuditRecorder(systemClock),
      config,
    })
    console.log(
      `purged ${count} user(s) soft-deleted more than ${config.userRetentionDays} day(s) ago`,
    )
  } finally {
    await database.close()
  }
} catch (error) {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`config error: ${problem}`)
  } else console.error(error)
  process.exit(1)
}
