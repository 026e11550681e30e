// npm run purge: removes users soft-deleted more than USER_RETENTION_DAYS ago (default 30)
// from DATABASE_URL (or the embedded database), once, recording UserHardDeleted for each.
// The service also does this hourly; this command is for cron jobs and operators.
//
// It then removes the workspaces closed (DELETE tenant) more than USER_RETENTION_DAYS ago
// with every row they own, audit events included, which frees their slugs. Only this
// command does that.
//
// It then prunes the rows that can never be used again and have been so for more than
// DEAD_ROW_DAYS: expired refresh tokens (every refresh leaves its spent one behind),
// sessions ended that long ago, expired one-time codes, OAuth states, WebAuthn challenges and
// OpenID provider models (db/cross-tenant.ts pruneDeadRows). Each table is walked once in bounded DELETE statements of PRUNE_BATCH
// rows, so the service keeps answering meanwhile. The service does not prune on its own:
// run this from cron (daily is plenty).
import { ConfigError, loadConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'
import { PRUNED_TABLES, pruneDeadRows } from '../src/db/cross-tenant.ts'
import { systemClock } from '../src/lib/clock.ts'
import { AuditRecorder } from '../src/modules/audit/recorder.ts'
import { purgeTenants } from '../src/modules/tenants/purge.ts'
import { purgeUsers } from '../src/modules/users/admin-purge.ts'

/** Days a row stays after it became unusable (a refresh token's own lifetime again). */
const DEAD_ROW_DAYS = 30
const PRUNE_BATCH = 5000
const DAY_MS = 24 * 60 * 60 * 1000

try {
  const config = loadConfig(process.env)
  const database = await openDatabase(config.databaseUrl, config.dataDir, {
    poolMode: config.databasePoolMode,
  })
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
    const tenants = await purgeTenants({ db: database.db, clock: systemClock, config })
    for (const t of tenants) {
      console.log(
        `purged tenant ${t.slug} (${t.id}), closed ${t.deletedAt.toISOString()}: ${t.rows} row(s)`,
      )
    }
    console.log(
      `purged ${tenants.length} tenant(s) closed more than ${config.userRetentionDays} day(s) ago`,
    )
    const cutoff = new Date(systemClock.now().getTime() - DEAD_ROW_DAYS * DAY_MS)
    for (const table of PRUNED_TABLES) {
      const { deleted, statements } = await pruneDeadRows(database.db, table, cutoff, PRUNE_BATCH)
      console.log(
        `pruned ${deleted} ${table} row(s) dead for more than ${DEAD_ROW_DAYS} days (${statements} statement(s))`,
      )
    }
  } finally {
    await database.close()
  }
} catch (error) {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`config error: ${problem}`)
  } else console.error(error)
  process.exit(1)
}
