// Webhooks (CONTRACT §13): the tenant's endpoints, listed page by page with what they
// receive and whether deliveries to them are failing, and a form to register one.
// #webhooks?id=<id> opens one endpoint (Webhook.tsx); a new one opens there with its
// signing secret, handed over in memory so that it is shown once.
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { useCreate } from './record.tsx'
import { ErrorText, formatDate, hashQuery, MoreButton, Table, usePages } from './ui.tsx'
import { eventsText, StateText, WebhookPage } from './Webhook.tsx'
import { WebhookForm } from './WebhookForm.tsx'

type Webhook = Schemas['Webhook']

export function Webhooks() {
  const id = hashQuery().get('id')
  return id ? <WebhookPage id={id} /> : <WebhookList />
}

function WebhookList() {
  const { session } = useConsole()
  const list = usePages<Webhook>(['webhooks'], (cursor) =>
    session.api.listWebhooks({ query: { limit: 50, cursor } }),
  )
  const create = useCreate('webhooks', async (body) => {
    const created = await session.api.createWebhook({ body: body as never })
    return { id: created.webhook.id, secret: created.secret }
  })
  return (
    <>
      <p className="hint intro">
        Endpoints that receive the workspace's audit events as signed HTTP POSTs (Standard
        Webhooks); a delivery that is not answered with a 2xx is retried on a schedule.
      </p>
      <ErrorText error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && (
        <p>No webhooks yet: register the first endpoint below.</p>
      )}
      {list.items.length > 0 && (
        <Table caption="Webhooks" columns={['Endpoint', 'Events', 'State', 'Created']}>
          {list.items.map((hook) => (
            <tr key={hook.id}>
              <td>
                <a href={`#webhooks?id=${encodeURIComponent(hook.id)}`}>{hook.url}</a>
                {hook.description && <div className="hint">{hook.description}</div>}
              </td>
              <td>{eventsText(hook.events)}</td>
              <td>
                <StateText hook={hook} />
              </td>
              <td>{formatDate(hook.createdAt)}</td>
            </tr>
          ))}
        </Table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
      <section aria-labelledby="new-hook-h">
        <h2 id="new-hook-h">New endpoint</h2>
        <WebhookForm submitLabel="Create webhook" {...formOf(create)} />
      </section>
    </>
  )
}
