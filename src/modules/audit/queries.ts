// The queries of the audit_events table: the recorder's append and the reads of the log.
// Every read is led by tenant_id and ordered `created_at DESC NULLS LAST, id DESC NULLS
// LAST`, exactly the order of the indexes audit_tenant_created, audit_tenant_action_created
// and audit_tenant_user_created (db/schema.ts), so a page is a short index range scan
// however large the log. `search` is served by the trigram index audit_tenant_search_trgm
// over the tenant and AUDIT_SEARCH_TEXT. Events are appended and never changed, but for
// an erasure's scrub (eventsAbout, scrubEvents); the tenant purge deletes them.

import type { Handle } from '../../db/client.ts'
import { and, eq, getTableColumns, inArray, isNull, lt, or, type SQL, sql } from '../../db/orm.ts'
import { namedStatement } from '../../db/prepared.ts'
import { AUDIT_SEARCH_TEXT, auditEvents, users } from '../../db/schema.ts'
import type { AuditAction } from './actions.ts'

export type AuditEvent = typeof auditEvents.$inferSelect

export interface AuditFilter {
  action?: string
  userId?: string
  /** Strictly older than this. */
  before?: Date
  /** The id of the last event of the page before (the cursor). */
  after?: string
  /** The oldest event to consider (the end of a search window). */
  until?: WindowEnd
}

/** An event's position: its id and its exact created_at, as PostgreSQL prints it. */
export interface WindowEnd {
  id: string
  at: string
}

const searchText = sql.raw(AUDIT_SEARCH_TEXT)
const newestFirst = [
  sql`${auditEvents.createdAt} DESC NULLS LAST`,
  sql`${auditEvents.id} DESC NULLS LAST`,
]

function where(tenantId: string, f: AuditFilter): SQL | undefined {
  return and(
    eq(auditEvents.tenantId, tenantId),
    f.action === undefined ? undefined : eq(auditEvents.action, f.action),
    f.userId === undefined ? undefined : eq(auditEvents.userId, f.userId),
    f.before === undefined ? undefined : lt(auditEvents.createdAt, f.before),
    f.after === undefined
      ? undefined
      : sql`(${auditEvents.createdAt}, ${auditEvents.id}) < (
          SELECT c.created_at, c.id FROM audit_events c WHERE c.tenant_id = ${tenantId} AND c.id = ${f.after})`,
    // Literal bounds (not a subquery), so that the planner sees how short the range is.
    f.until === undefined
      ? undefined
      : sql`${auditEvents.createdAt} >= ${f.until.at}::timestamptz
          AND (${auditEvents.createdAt}, ${auditEvents.id}) >= (${f.until.at}::timestamptz, ${f.until.id}::uuid)`,
  )
}

/** An ILIKE pattern matching `term` anywhere, with its wildcards taken literally. */
export function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/**
 * The search condition. pg_trgm's cost grows with how common the term's trigrams are,
 * and the domain of an address ("@acme.com") is in nearly every event of a tenant: an
 * address is looked up through the index by its local part and the "@", and the whole
 * term is then checked on those rows only.
 */
function matches(term: string): SQL {
  const at = term.indexOf('@')
  const local = at > 0 ? term.slice(0, at + 1) : ''
  if (at < term.length - 1 && /[A-Za-z0-9]{3}/.test(local)) {
    return sql`${searchText} ILIKE ${containsPattern(local)}
      AND strpos(lower(${searchText}), lower(${term})) > 0`
  }
  return sql`${searchText} ILIKE ${containsPattern(term)}`
}

/**
 * The tenant as the search index audit_tenant_search_trgm holds it (a one-element array),
 * beside the term whenever the index can serve the term (a run of three letters or digits):
 * the index scan then reads this tenant's entries only, never those of every tenant whose
 * events share the term's trigrams. Redundant with `tenant_id =`, so it changes no result.
 */
function searchedTenant(tenantId: string, term: string): SQL | undefined {
  if (!/[A-Za-z0-9]{3}/.test(term)) return undefined
  return sql`ARRAY[${auditEvents.tenantId}] @> ARRAY[${tenantId}::uuid]`
}

/** Up to `limit` events, newest first, matching the filter and, if given, the search. */
export function auditQuery(
  db: Handle,
  tenantId: string,
  filter: AuditFilter,
  limit: number,
  search?: string,
) {
  return db
    .select()
    .from(auditEvents)
    .where(
      and(
        where(tenantId, filter),
        search === undefined ? undefined : and(searchedTenant(tenantId, search), matches(search)),
      ),
    )
    .orderBy(...newestFirst)
    .limit(limit)
}

/**
 * The id of the `window`-th event of the filter, newest first (undefined when there are
 * fewer). A search that no trigram index can serve looks for matches down to this event
 * only, so that a rare short term costs a bounded scan rather than a pass over the log.
 */
export async function windowEnd(
  db: Handle,
  tenantId: string,
  filter: AuditFilter,
  window: number,
): Promise<WindowEnd | undefined> {
  const rows = await db
    .select({ id: auditEvents.id, at: sql<string>`${auditEvents.createdAt}::text` })
    .from(auditEvents)
    .where(where(tenantId, filter))
    .orderBy(...newestFirst)
    .offset(window - 1)
    .limit(1)
  return rows[0]
}

/** Events about the user or made by it. */
const concerning = (userId: string) =>
  or(eq(auditEvents.userId, userId), eq(auditEvents.actorId, userId))

/**
 * The user's events (about it, or made by it), newest first, `limit` of them: the
 * personal-data export's (CONTRACT §9).
 */
export async function eventsConcerning(
  db: Handle,
  tenantId: string,
  userId: string,
  limit: number,
): Promise<AuditEvent[]> {
  return db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, tenantId), concerning(userId)))
    .orderBy(...newestFirst)
    .limit(limit)
}

/**
 * Erasure (CONTRACT §9): the tenant's events that concern the user, were made by it, or
 * whose email or metadata name its address anywhere (a failed login of the address has no
 * user id). A superset: the caller decides, row by row, what names the address.
 */
export async function eventsAbout(
  db: Handle,
  tenantId: string,
  userId: string,
  address: string,
): Promise<AuditEvent[]> {
  return db
    .select()
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.tenantId, tenantId),
        or(concerning(userId), and(searchedTenant(tenantId, address), matches(address))),
      ),
    )
}

export interface ScrubbedEvent {
  id: string
  email: string | null
  metadata: Record<string, unknown>
}

/**
 * Erasure: rewrites events in place, the one update the audit log gets. Each keeps its
 * action, actor and time; its email and metadata are replaced, its ip and userAgent
 * nulled. In statements of 500 rows.
 */
export async function scrubEvents(db: Handle, tenantId: string, rows: ScrubbedEvent[]) {
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = JSON.stringify(rows.slice(i, i + 500))
    await db.execute(sql`
      UPDATE audit_events a
      SET email = v.email, metadata = v.metadata, ip = NULL, user_agent = NULL
      FROM jsonb_to_recordset(${chunk}::jsonb) AS v(id uuid, email text, metadata jsonb)
      WHERE a.tenant_id = ${tenantId} AND a.id = v.id
    `)
  }
}

/** What the events of one write share: the tenant, who acted and from where, and when. */
export interface AuditWrite {
  tenantId: string
  actorType: string
  actorId: string | null
  ip: string | null
  userAgent: string | null
  createdAt: Date
}

/** One event of a write: what only it says. */
export interface AuditRow {
  id: string
  action: AuditAction
  userId: string | null
  email: string | null
  metadata: Record<string, unknown>
  /** The body a webhook subscribed to this action is sent (CONTRACT §13). */
  webhookPayload: unknown
}

// Every write of the service records one or more events, so it is one raw named statement
// for any number of rows (arrays unnested in order): the query builder's multi-row INSERT
// was built and planned again on each sign-in (issue 10). The same statement queues the
// webhook outbox (CONTRACT §13): a delivery for each enabled webhook of the tenant
// subscribed to an event, so a delivery exists exactly when its event committed, with no
// second round trip; a tenant without webhooks pays one empty probe of the webhooks key.
// The body is the event as the audit list shows it (§13), so it gains `userEmail` here: the
// live address of the user it concerns, read in the same statement (a user written earlier
// in the transaction is seen; a deleted user's address never is, as in the list).
const appendEvents = namedStatement(
  'audit_append',
  `WITH e AS (
     SELECT * FROM unnest($7::uuid[], $8::text[], $9::uuid[], $10::text[], $11::text[],
       $12::text[]) AS e(id, action, user_id, email, metadata, payload)
   ), events AS (
     INSERT INTO audit_events
       (tenant_id, id, action, actor_type, actor_id, user_id, email, ip, user_agent, metadata,
        created_at)
     SELECT $1, e.id, e.action, $2, $3, e.user_id, e.email, $4, $5, e.metadata::jsonb, $6
     FROM e
   )
   INSERT INTO webhook_deliveries
     (tenant_id, id, webhook_id, event_id, event_type, payload, status, attempts,
      next_attempt_at, created_at)
   SELECT w.tenant_id, gen_random_uuid(), w.id, e.id, e.action,
     CASE WHEN u.email IS NULL THEN e.payload::jsonb
       ELSE jsonb_set(e.payload::jsonb, '{data,event,userEmail}', to_jsonb(u.email)) END,
     'Pending', 0, $6, $6
   FROM e
   JOIN webhooks w ON w.tenant_id = $1 AND w.enabled
     AND (e.action = ANY(w.events) OR w.events = ARRAY['*'])
   LEFT JOIN users u ON u.tenant_id = $1 AND u.id = e.user_id AND u.deleted_at IS NULL`,
)

/**
 * Appends events and queues their webhook deliveries; apart from an erasure's scrub, the
 * audit log is never updated here.
 */
export async function insertAuditEvents(
  handle: Handle,
  write: AuditWrite,
  rows: AuditRow[],
): Promise<void> {
  await appendEvents(handle, [
    write.tenantId,
    write.actorType,
    write.actorId,
    write.ip,
    write.userAgent,
    write.createdAt,
    rows.map((r) => r.id),
    rows.map((r) => r.action),
    rows.map((r) => r.userId),
    rows.map((r) => r.email),
    rows.map((r) => JSON.stringify(r.metadata)),
    rows.map((r) => JSON.stringify(r.webhookPayload)),
  ])
}

/** The bounds and filter of an export (GET audit/export). */
export interface ExportFilter {
  action?: string
  /** Inclusive. */
  since?: Date
  /** Exclusive. */
  until?: Date
}

/** Up to `limit` events, oldest first, strictly after `after` (the last of the page before). */
export function exportPage(
  db: Handle,
  tenantId: string,
  filter: ExportFilter,
  after: WindowEnd | undefined,
  limit: number,
) {
  return (
    db
      .select({ ...getTableColumns(auditEvents), at: sql<string>`${auditEvents.createdAt}::text` })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.tenantId, tenantId),
          filter.action === undefined ? undefined : eq(auditEvents.action, filter.action),
          filter.since === undefined
            ? undefined
            : sql`${auditEvents.createdAt} >= ${filter.since.toISOString()}::timestamptz`,
          filter.until === undefined ? undefined : lt(auditEvents.createdAt, filter.until),
          // The exact created_at as PostgreSQL prints it: a JavaScript Date keeps milliseconds.
          after === undefined
            ? undefined
            : sql`(${auditEvents.createdAt}, ${auditEvents.id}) > (${after.at}::timestamptz, ${after.id}::uuid)`,
        ),
      )
      // The newest-first indexes read backwards.
      .orderBy(
        sql`${auditEvents.createdAt} ASC NULLS FIRST`,
        sql`${auditEvents.id} ASC NULLS FIRST`,
      )
      .limit(limit)
  )
}

/** The addresses of the live users (not deleted) among `ids`, by id. */
export async function liveUserEmails(
  db: Handle,
  tenantId: string,
  ids: string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(and(eq(users.tenantId, tenantId), inArray(users.id, ids), isNull(users.deletedAt)))
  return new Map(rows.map((r) => [r.id, r.email]))
}

/** One user's UserLogin events of a period, grouped by how they signed in. */
export interface SignInTally {
  userId: string
  /** metadata.via (password, passwordless, passkey, reset, email-verification), if any. */
  via: string | null
  /** metadata.method (sso, idp, social, …), if any. */
  method: string | null
  count: number
}

/**
 * The policy dry-run's read (CONTRACT §21): the tenant's UserLogin events at or after
 * `since`, counted per user and way of signing in. Served by audit_tenant_action_created.
 */
export async function signInsSince(
  db: Handle,
  tenantId: string,
  since: Date,
): Promise<SignInTally[]> {
  const rows = await db
    .select({
      userId: auditEvents.userId,
      via: sql<string | null>`${auditEvents.metadata}->>'via'`,
      method: sql<string | null>`${auditEvents.metadata}->>'method'`,
      count: sql<number>`count(*)::int`,
    })
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.tenantId, tenantId),
        eq(auditEvents.action, 'UserLogin'),
        sql`${auditEvents.createdAt} >= ${since.toISOString()}::timestamptz`,
      ),
    )
    .groupBy(auditEvents.userId, sql`2`, sql`3`)
  return rows.flatMap((r) =>
    r.userId ? [{ userId: r.userId, via: r.via, method: r.method, count: Number(r.count) }] : [],
  )
}
