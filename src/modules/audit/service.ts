// GET audit (SPEC, Events; CONTRACT §2): newest first, every filter, keyset pages.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts'
import * as store from './queries.ts'
import type { AuditQuery } from './schemas.ts'

// bench/audit.ts builds its queries with this name from here.
export type { AuditQuery }

/** Events a short search examines per page (see store.windowEnd). */
export const SHORT_SEARCH_WINDOW = 5000

export function presentAuditEvent(e: store.AuditEvent) {
  return {
    id: e.id,
    action: e.action,
    actorType: e.actorType as 'user' | 'apiKey' | 'system' | 'anonymous',
    actorId: e.actorId,
    userId: e.userId,
    ip: e.ip,
    userAgent: e.userAgent,
    metadata: e.metadata ?? {},
    createdAt: e.createdAt.toISOString(),
  }
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

export async function listAuditPage(deps: Pick<Deps, 'db'>, tenantId: string, query: AuditQuery) {
  const { statement, until } = await auditPageQuery(deps.db, tenantId, query)
  const rows = await statement
  const { limit } = query
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  let nextCursor: string | null = null
  if (rows.length > limit && last) nextCursor = encodeCursor(last.id)
  else if (until) nextCursor = encodeCursor(until.id)
  return { items: page.map(presentAuditEvent), nextCursor }
}
