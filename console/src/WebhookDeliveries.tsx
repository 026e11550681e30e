// A webhook endpoint's delivery log (CONTRACT §13, GET webhooks/{id}/deliveries, oldest
// first as the API pages it): each event sent or to send, its attempts and the endpoint's
// last answer, "Retry" (sent again now, with the same webhook-id) and "Send test event".
// Deliveries move by themselves (any instance's worker sends them), so the log loads again
// every few seconds while one is due within the minute, and the endpoint's state (failing
// since) with it when a delivery moved.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { ErrorText, formatDate, MoreButton, usePages } from './ui.tsx'

type Delivery = Schemas['WebhookDelivery']

const POLL_MS = 2000

/** Pending and due soon: the worker takes it within seconds (a later retry is not awaited). */
const dueSoon = (d: Delivery) =>
  d.status === 'Pending' && Date.parse(d.nextAttemptAt ?? '') - Date.now() < 60_000

export function Deliveries({ id, enabled }: { id: string; enabled: boolean }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const key = ['webhooks', id, 'deliveries']
  const list = usePages<Delivery>(
    key,
    (cursor) => session.api.listWebhookDeliveries({ path: { id }, query: { limit: 50, cursor } }),
    (items) => (items.some(dueSoon) ? POLL_MS : false),
  )
  const progress = list.items.map((d) => `${d.status}${d.attempts}`).join()
  useEffect(() => {
    if (progress) void queries.invalidateQueries({ queryKey: ['webhooks', id], exact: true })
  }, [progress, id, queries])
  const reload = () => queries.invalidateQueries({ queryKey: key })
  const test = useMutation({
    mutationFn: () => session.api.testWebhook({ path: { id } }),
    onSuccess: reload,
  })
  const retry = useMutation({
    mutationFn: (deliveryId: string) =>
      session.api.retryWebhookDelivery({ path: { id, deliveryId } }),
    onSuccess: reload,
  })
  return (
    <section aria-labelledby="deliveries-h">
      <h2 id="deliveries-h">Deliveries</h2>
      <p className="hint">
        Oldest first. The list refreshes by itself while a delivery is about to be sent.
        {!enabled && ' The endpoint is disabled: deliveries to it fail until it is enabled.'}
      </p>
      <div className="row">
        <button type="button" disabled={test.isPending} onClick={() => test.mutate()}>
          Send test event
        </button>
        <button type="button" disabled={list.refreshing} onClick={() => list.refresh()}>
          Refresh
        </button>
      </div>
      {test.isSuccess && <p role="status">A WebhookTest event is queued for this endpoint.</p>}
      {retry.isSuccess && <p role="status">The delivery is queued to be sent again now.</p>}
      <ErrorText error={list.error ?? test.error ?? retry.error} />
      {!list.loading && !list.error && list.items.length === 0 && <p>No deliveries yet.</p>}
      {list.items.length > 0 && (
        <table className="deliveries">
          <caption className="visually-hidden">Deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Response</th>
              <th scope="col">Last error</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((d) => (
              <tr key={d.id}>
                <td data-label="Event">{d.eventType}</td>
                <td data-label="Status">
                  <span className={`delivery-${d.status.toLowerCase()}`}>{d.status}</span>
                </td>
                <td data-label="Attempts">{d.attempts}</td>
                <td data-label="Response">{d.lastResponseStatus ?? '—'}</td>
                <td className="last-error" data-label="Last error">
                  {d.lastError ?? '—'}
                </td>
                <td data-label="Next attempt">{formatDate(d.nextAttemptAt)}</td>
                <td data-label="Created">{formatDate(d.createdAt)}</td>
                <td className="delivery-actions">
                  <button
                    type="button"
                    disabled={retry.isPending && retry.variables === d.id}
                    onClick={() => retry.mutate(d.id)}
                  >
                    Retry
                    <span className="visually-hidden">
                      {' '}
                      {d.eventType} of {formatDate(d.createdAt)}
                    </span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </section>
  )
}
