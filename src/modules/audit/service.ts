// GET audit (SPEC, Events; CONTRACT §2): newest first, every filter, keyset pages.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts'
import { presentAuditEvent } from './present.ts'
import * as store from './queries.ts'
import type { AuditQuery } from './schemas.ts'

// bench/audit.ts builds its queries with this name from here.
export type { AuditQuery }
export { presentAuditEvent }

/** Events a short search examines per page (see store.windowEnd). */
export const SHORT_SEARCH_WINDOW = 5000

/** The addresses of the live users the events concern (a deleted user's never shows). */
function emailsOf(db: Handle, tenantId: string, events: store.AuditEvent[]) {
  const ids = new Set<string>()
  for (const e of events) if (e.userId !== null) ids.add(e.userId)
  return store.liveUserEmails(db, tenantId, [...ids])
}

/**
 * pg_trgm can only use the index for a term with a run of three letters or digits; a
 * shorter term is searched one window of events at a time. Such a page may hold fewer
 * than `limit` events (even none) and still carry a nextCursor: the search goes on there.
 */
export function needsWindow(search: string): boolean {
  return !/[A-Za-z0-9]{3}/.test(search)
}

/** The statement behind a page (bench/audit.ts explains it) and its search window end. */
export async function auditPageQuery(db: Handle, tenantId: string, query: AuditQuery) {
  const filter: store.AuditFilter = {
    action: query.action,
    userId: query.userId,
    before: query.before === undefined ? undefined : new Date(query.before),
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
  }
  const { search, limit } = query
  const until =
    search !== undefined && needsWindow(search)
      ? await store.windowEnd(db, tenantId, filter, SHORT_SEARCH_WINDOW)
      : undefined
  return {
    statement: store.auditQuery(db, tenantId, { ...filter, until }, limit + 1, search),
    until,
  }
}

export async function listAuditPage(
  deps: Pick<Deps, 'reads'>,
  tenantId: string,
  query: AuditQuery,
) {
  // A read that may lag: the replica serves it once caught up (db/replica.ts).
  const db = await deps.reads.reader()
  const { statement, until } = await auditPageQuery(db, tenantId, query)
  const rows = await statement
  const { limit } = query
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  let nextCursor: string | null = null
  if (rows.length > limit && last) nextCursor = encodeCursor(last.id)
  else if (until) nextCursor = encodeCursor(until.id)
  const emails = await emailsOf(db, tenantId, page)
  return { items: page.map((e) => presentAuditEvent(e, emails)), nextCursor }
}

/** Events an export reads per statement. */
export const EXPORT_PAGE = 1000

/** Told of each page an export reads and of its end (tests watch the loop through it). */
export const exportProbe: {
  onPage?: (tenantId: string, rows: number) => void
  onEnd?: (tenantId: string, completed: boolean) => void
} = {}

/**
 * GET audit/export: every matching event, oldest first, one JSON line each, read in keyset
 * pages. As a Readable's source it is pulled only when the response drains, so memory stays
 * one page however long the log; destroying the stream (the client went away) returns the
 * generator, which reads no further page.
 */
export async function* exportAuditEvents(
  deps: Pick<Deps, 'reads'>,
  tenantId: string,
  filter: store.ExportFilter,
): AsyncGenerator<string> {
  let after: store.WindowEnd | undefined
  let completed = false
  try {
    for (;;) {
      // Each page asks afresh where it may be read (db/replica.ts).
      const db = await deps.reads.reader()
      const rows = await store.exportPage(db, tenantId, filter, after, EXPORT_PAGE)
      exportProbe.onPage?.(tenantId, rows.length)
      if (rows.length === 0) break
      const emails = await emailsOf(db, tenantId, rows)
      let chunk = ''
      for (const row of rows) chunk += `${JSON.stringify(presentAuditEvent(row, emails))}\n`
      yield chunk
      if (rows.length < EXPORT_PAGE) break
      const last = rows[rows.length - 1]
      after = { id: last.id, at: last.at }
    }
    completed = true
  } finally {
    exportProbe.onEnd?.(tenantId, completed)
  }
}
