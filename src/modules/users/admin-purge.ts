// The purge: users soft-deleted more than USER_RETENTION_DAYS ago (default 30) are removed
// for good, each with a UserHardDeleted event by the system. It runs hourly in every
// instance (the first run a minute after start) and once with `npm run purge`.
import type { FastifyBaseLogger } from 'fastify'
import { purgeDeletedUsers } from '../../db/cross-tenant.ts'
import type { Deps } from '../../deps.ts'
import { SYSTEM_ACTOR } from '../audit/recorder.ts'

export type PurgeDeps = Pick<Deps, 'db' | 'clock' | 'audit' | 'config'>

const BATCH = 500
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Purges in batches, each batch and its audit events in one transaction. The events keep
 * the user's id but not the address: the purge is where personal data leaves.
 */
export async function purgeUsers(deps: PurgeDeps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.userRetentionDays * DAY_MS)
  let total = 0
  for (;;) {
    const purged = await deps.db.transaction(async (tx) => {
      const rows = await purgeDeletedUsers(tx, cutoff, BATCH)
      const byTenant = Map.groupBy(rows, (r) => r.tenantId)
      for (const [tenantId, gone] of byTenant) {
        await deps.audit.record(
          tx,
          tenantId,
          SYSTEM_ACTOR,
          gone.map((u) => ({
            action: 'UserHardDeleted' as const,
            userId: u.id,
            metadata: {
              deletedAt: u.deletedAt.toISOString(),
              retentionDays: deps.config.userRetentionDays,
            },
          })),
        )
      }
      return rows.length
    })
    total += purged
    if (purged < BATCH) return total
  }
}

export interface PurgeSchedule {
  /** Stops the timers and waits for a purge in progress. */
  stop(): Promise<void>
}

/** Runs the purge after `firstMs`, then every `everyMs`, on timers that never hold the process open. */
export function scheduleUserPurge(
  deps: PurgeDeps,
  log: FastifyBaseLogger,
  options: { firstMs?: number; everyMs?: number } = {},
): PurgeSchedule {
  const { firstMs = 60_000, everyMs = 60 * 60_000 } = options
  let running: Promise<void> | undefined
  const run = () => {
    // One run at a time per instance; instances share the work through SKIP LOCKED.
    running ??= purgeUsers(deps)
      .then((count) => {
        if (count > 0) log.info({ count }, 'purged soft-deleted users')
      })
      .catch((error) => log.error({ err: error }, 'user purge failed'))
      .finally(() => {
        running = undefined
      })
  }
  const first = setTimeout(run, firstMs).unref()
  const every = setInterval(run, everyMs).unref()
  return {
    async stop() {
      clearTimeout(first)
      clearInterval(every)
      await running
    },
  }
}
