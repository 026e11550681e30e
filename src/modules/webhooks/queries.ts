// The queries of the webhooks and webhook_deliveries tables; no other file writes them but
// db/cross-tenant.ts (the delivery worker's claim across tenants, key rotation's scan) and
// the audit log's append (audit/queries.ts), which queues the outbox in its own statement.
import { FLUSH_LATER, type Handle } from '../../db/client.ts'
import { afterRow, type Paging, pageOwned } from '../../db/keyset.ts'
import { and, asc, eq, isNotNull, lte, sql } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { webhookDeliveries, webhooks } from '../../db/schema.ts'

export type Webhook = typeof webhooks.$inferSelect
export type NewWebhook = typeof webhooks.$inferInsert
export type Delivery = typeof webhookDeliveries.$inferSelect
export type NewDelivery = typeof webhookDeliveries.$inferInsert

export async function insertWebhook(db: Handle, row: NewWebhook): Promise<Webhook> {
  const rows = await db.insert(webhooks).values(row).returning()
  return rows[0]
}

export function findWebhook(
  db: Handle,
  tenantId: string,
  id: string,
): Promise<Webhook | undefined> {
  return findOwned(db, webhooks, tenantId, id)
}

/** Oldest first; `after` is the id of the last webhook of the page before. */
export const listWebhooks = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, webhooks, tenantId, page)

export async function updateWebhook(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewWebhook>,
) {
  const rows = await db
    .update(webhooks)
    .set(changes)
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)))
    .returning()
  return rows[0] as Webhook | undefined
}

/** Deletes the webhook and (by cascade) its deliveries. */
export async function deleteWebhook(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .delete(webhooks)
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)))
    .returning()
  return rows[0] as Webhook | undefined
}

export async function insertDelivery(db: Handle, row: NewDelivery): Promise<Delivery> {
  const rows = await db.insert(webhookDeliveries).values(row).returning()
  return rows[0]
}

export async function findDelivery(db: Handle, tenantId: string, webhookId: string, id: string) {
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, tenantId),
        eq(webhookDeliveries.webhookId, webhookId),
        eq(webhookDeliveries.id, id),
      ),
    )
    .limit(1)
  return rows[0] as Delivery | undefined
}

/** A webhook's deliveries, oldest first; `after` is the id of the last of the page before. */
export async function listDeliveries(
  db: Handle,
  tenantId: string,
  webhookId: string,
  options: { limit: number; after?: string },
): Promise<Delivery[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, tenantId),
        eq(webhookDeliveries.webhookId, webhookId),
        afterRow(webhookDeliveries, tenantId, options.after),
      ),
    )
    .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
    .limit(options.limit)
}

export async function updateDelivery(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewDelivery>,
) {
  const rows = await db
    .update(webhookDeliveries)
    .set(changes)
    .where(and(eq(webhookDeliveries.tenantId, tenantId), eq(webhookDeliveries.id, id)))
    .returning()
  return rows[0] as Delivery | undefined
}

/** The worker's record of an attempt; committed without waiting for the disk (FLUSH_LATER). */
export async function recordAttempt(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Pick<NewDelivery, 'status' | 'lastResponseStatus' | 'lastError' | 'nextAttemptAt'>,
) {
  await db
    .update(webhookDeliveries)
    .set(changes)
    .where(and(eq(webhookDeliveries.tenantId, tenantId), eq(webhookDeliveries.id, id), FLUSH_LATER))
}

export interface Success {
  tenantId: string
  id: string
  status: number
}

/** Marks deliveries Succeeded, many in one statement; committed without the flush wait. */
export async function recordSuccesses(db: Handle, batch: Success[]) {
  if (batch.length === 0) return
  await db.execute(sql`
    UPDATE webhook_deliveries d
    SET status = 'Succeeded', last_response_status = s.status, last_error = NULL,
      next_attempt_at = NULL
    FROM unnest(${sql.param(batch.map((b) => b.tenantId))}::uuid[],
      ${sql.param(batch.map((b) => b.id))}::uuid[],
      ${sql.param(batch.map((b) => b.status))}::int[]) AS s(tenant_id, id, status)
    WHERE d.tenant_id = s.tenant_id AND d.id = s.id AND ${FLUSH_LATER}`)
}

/**
 * Gives a claimed delivery back (its worker is stopping): due at `now`, the claim's attempt
 * uncounted. Only while the claim is still this one (`leaseUntil` unchanged).
 */
export async function releaseClaim(
  db: Handle,
  tenantId: string,
  id: string,
  leaseUntil: Date,
  now: Date,
) {
  await db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now, attempts: sql`${webhookDeliveries.attempts} - 1` })
    .where(
      and(
        eq(webhookDeliveries.tenantId, tenantId),
        eq(webhookDeliveries.id, id),
        eq(webhookDeliveries.status, 'Pending'),
        eq(webhookDeliveries.nextAttemptAt, leaseUntil),
        FLUSH_LATER,
      ),
    )
}

/** Claimed deliveries with what sending them needs from their webhooks (one read a batch). */
export async function findClaimed(db: Handle, claimed: { tenantId: string; id: string }[]) {
  if (claimed.length === 0) return []
  // The claim crosses tenants; this read is keyed by each row's own (tenant_id, id).
  const keys = claimed.map((c) => sql`(${c.tenantId}::uuid, ${c.id}::uuid)`)
  const rows = await db
    .select({ delivery: webhookDeliveries, webhook: webhooks })
    .from(webhookDeliveries)
    .innerJoin(
      webhooks,
      and(
        eq(webhooks.tenantId, webhookDeliveries.tenantId),
        eq(webhooks.id, webhookDeliveries.webhookId),
      ),
    )
    .where(
      sql`(${webhookDeliveries.tenantId}, ${webhookDeliveries.id}) IN (${sql.join(keys, sql`, `)})`,
    )
  return rows as { delivery: Delivery; webhook: Webhook }[]
}

/** A success ends the endpoint's run of failures. */
export async function clearFailing(db: Handle, tenantId: string, id: string) {
  await db
    .update(webhooks)
    .set({ failingSince: null })
    .where(
      and(
        eq(webhooks.tenantId, tenantId),
        eq(webhooks.id, id),
        isNotNull(webhooks.failingSince),
        FLUSH_LATER,
      ),
    )
}

/** Starts the endpoint's run of failures at `now` unless one is running; answers its start. */
export async function markFailing(db: Handle, tenantId: string, id: string, now: Date) {
  const rows = await db
    .update(webhooks)
    .set({
      failingSince: sql`COALESCE(${webhooks.failingSince}, ${now.toISOString()}::timestamptz)`,
    })
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id), FLUSH_LATER))
    .returning({ failingSince: webhooks.failingSince })
  return rows[0]?.failingSince ?? null
}

/** Disables an enabled endpoint failing since `cutoff` or before; whether this call did. */
export async function disableFailing(db: Handle, tenantId: string, id: string, cutoff: Date) {
  const rows = await db
    .update(webhooks)
    .set({ enabled: false })
    .where(
      and(
        eq(webhooks.tenantId, tenantId),
        eq(webhooks.id, id),
        eq(webhooks.enabled, true),
        lte(webhooks.failingSince, cutoff),
      ),
    )
    .returning({ id: webhooks.id })
  return rows.length > 0
}
