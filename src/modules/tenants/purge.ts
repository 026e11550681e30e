// The tenant purge (CONTRACT §9): workspaces closed more than USER_RETENTION_DAYS ago are
// removed with every row they own (db/cross-tenant.ts purgeTenant), freeing their slugs.
// Run by `npm run purge` (scripts/purge.ts), not by the service's hourly timer: a large
// workspace is many statements, the kind of work a daily cron job does.
import { type DeletedTenant, deletedTenantsBefore, purgeTenant } from '../../db/cross-tenant.ts'
import type { Deps } from '../../deps.ts'

const DAY_MS = 24 * 60 * 60 * 1000
const TENANTS_PER_PASS = 100
const ROWS_PER_STATEMENT = 5000

/** Purges every tenant past its retention; answers those removed (with their rows counted). */
export async function purgeTenants(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
): Promise<(DeletedTenant & { rows: number })[]> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.userRetentionDays * DAY_MS)
  const purged: (DeletedTenant & { rows: number })[] = []
  for (;;) {
    const due = await deletedTenantsBefore(deps.db, cutoff, TENANTS_PER_PASS)
    for (const tenant of due) {
      const rows = await purgeTenant(deps.db, tenant.id, cutoff, ROWS_PER_STATEMENT)
      purged.push({ ...tenant, rows })
    }
    if (due.length < TENANTS_PER_PASS) return purged
  }
}
