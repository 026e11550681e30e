// The audit log: every filter of the API (action, user, before a date, search), newest
// first, loaded page after page as the list scrolls; an event opens to show its metadata.
// #audit?user=<id> (the link on a user's row) opens it filtered to that user. Export
// downloads the applied filters' events as NDJSON (GET audit/export); a user's address
// shows beside its id while that user exists.
import { useState } from 'react'
import type { SessionClient } from '../../sdk/src/session.ts'
import { AUDIT_ACTIONS } from './actions.ts'
import { useConsole } from './api.ts'
import { submitted } from './fields.tsx'
import { ErrorText, formatDate, hashQuery, MoreButton, usePages } from './ui.tsx'

interface Filters {
  action: string
  userId: string
  before: string
  search: string
}

const EMPTY: Filters = { action: '', userId: '', before: '', search: '' }

/** The filters the URL's hash asks for (the shell remounts the panel when it changes). */
function filtersOfHash(): Filters {
  const query = hashQuery()
  return { ...EMPTY, userId: query.get('user') ?? '' }
}

/**
 * The export of the applied filters, saved as a file. The service filters by action and
 * time (`before` is its exclusive `until`); the user filter is applied to the lines here,
 * as the export takes none. The search is not applied (the button says so).
 */
async function download(session: SessionClient, tenant: string, filters: Filters) {
  const blob = await session.api.exportAuditEvents({
    query: {
      action: (filters.action || undefined) as never,
      until: filters.before ? new Date(filters.before).toISOString() : undefined,
    },
  })
  let body = blob
  if (filters.userId) {
    const lines = (await body.text())
      .split('\n')
      .filter((line) => line && JSON.parse(line).userId === filters.userId)
    body = new Blob(
      lines.map((line) => `${line}\n`),
      { type: 'application/x-ndjson' },
    )
  }
  const link = document.createElement('a')
  link.href = URL.createObjectURL(body)
  link.download = `audit-${tenant}-${new Date().toISOString().slice(0, 10)}.ndjson`
  link.click()
  // After the click has handed the file to the browser.
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000)
}

export function Audit() {
  const { session, tenant } = useConsole()
  const [exporting, setExporting] = useState(false)
  const [exportError, setExportError] = useState<unknown>(null)
  const [draft, setDraft] = useState<Filters>(filtersOfHash)
  const [filters, setFilters] = useState<Filters>(filtersOfHash)
  const query = {
    action: filters.action || undefined,
    userId: filters.userId || undefined,
    before: filters.before ? new Date(filters.before).toISOString() : undefined,
    search: filters.search || undefined,
  }
  const list = usePages(['audit', filters], (cursor) =>
    session.api.listAuditEvents({ query: { ...query, limit: 50, cursor } as never }),
  )
  const submit = submitted(() => setFilters(draft))
  const exportNow = async () => {
    setExporting(true)
    setExportError(null)
    try {
      await download(session, tenant, filters)
    } catch (error) {
      setExportError(error)
    } finally {
      setExporting(false)
    }
  }
  return (
    <>
      <form className="filters" onSubmit={submit}>
        <div>
          <label htmlFor="f-action">Action</label>
          <select
            id="f-action"
            value={draft.action}
            onChange={(e) => setDraft({ ...draft, action: e.target.value })}
          >
            <option value="">Any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="f-user">User id</label>
          <input
            id="f-user"
            value={draft.userId}
            onChange={(e) => setDraft({ ...draft, userId: e.target.value })}
          />
        </div>
        <div>
          <label htmlFor="f-before">Before</label>
          <input
            id="f-before"
            type="datetime-local"
            value={draft.before}
            onChange={(e) => setDraft({ ...draft, before: e.target.value })}
          />
        </div>
        <div>
          <label htmlFor="f-search">Search</label>
          <input
            id="f-search"
            type="search"
            value={draft.search}
            onChange={(e) => setDraft({ ...draft, search: e.target.value })}
          />
        </div>
        <button type="submit" className="primary">
          Apply
        </button>
        <button type="button" onClick={exportNow} disabled={exporting}>
          {exporting ? 'Exporting…' : filters.search ? 'Export (without the search)' : 'Export'}
        </button>
      </form>
      <ErrorText error={exportError} />
      <ErrorText error={list.error} />
      <ol className="events" aria-label="Audit events">
        {list.items.map((event) => (
          <li key={event.id}>
            <details>
              <summary>
                <span className="action">{event.action}</span>{' '}
                <span>{String(event.userEmail ?? event.metadata.email ?? event.userId ?? '')}</span>{' '}
                <time dateTime={event.createdAt}>{formatDate(event.createdAt)}</time>
              </summary>
              <dl className="facts">
                <dt>Actor</dt>
                <dd>
                  {event.actorType} {event.actorId ?? ''}
                </dd>
                <dt>User</dt>
                <dd>
                  {event.userId ?? '—'}
                  {event.userEmail && <span> ({event.userEmail})</span>}
                </dd>
                <dt>Address</dt>
                <dd>{event.ip ?? '—'}</dd>
                <dt>Browser</dt>
                <dd>{event.userAgent ?? '—'}</dd>
              </dl>
              <pre className="metadata">{JSON.stringify(event.metadata, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
      {!list.loading && list.items.length === 0 && <p>No events match.</p>}
      <MoreButton auto hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}
