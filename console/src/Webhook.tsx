// One webhook endpoint (CONTRACT §13): its signing secret once (after creation or rotation:
// the service keeps it sealed and never answers it again), what it receives, enable and
// disable, a test event, rotation, deletion, its settings and its delivery log.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { DeleteButton, EnableButton, SettingsSection, useRecord } from './record.tsx'
import { ConfirmButton, ErrorText, formatDate, SecretOnce, useHandedOverSecret } from './ui.tsx'
import { Deliveries } from './WebhookDeliveries.tsx'
import { WebhookForm } from './WebhookForm.tsx'

type Webhook = Schemas['Webhook']

/** "All events", or the chosen ones (the first few, and how many more). */
export function eventsText(events: string[]): string {
  if (events.includes('*')) return 'All events'
  const shown = events.slice(0, 2).join(', ')
  return events.length > 2 ? `${shown} and ${events.length - 2} more` : shown
}

/** Enabled or not, and failing since when: what the list and the endpoint's page show. */
export function StateText({ hook }: { hook: Webhook }) {
  return (
    <>
      {hook.enabled ? 'Enabled' : 'Disabled'}
      {hook.failingSince && (
        <span className="failing"> · failing since {formatDate(hook.failingSince)}</span>
      )}
    </>
  )
}

export function WebhookPage({ id }: { id: string }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const [secret, setSecret] = useHandedOverSecret(`webhooks/${id}`)
  // A change is an audit event the endpoint may receive: its deliveries load again too.
  const deliveries = () => queries.invalidateQueries({ queryKey: ['webhooks', id, 'deliveries'] })
  const { record, update, toggle, remove } = useRecord<Webhook>({
    area: 'webhooks',
    id,
    read: async () => (await session.api.getWebhook({ path: { id } })).webhook,
    update: async (body) =>
      (await session.api.updateWebhook({ path: { id }, body: body as never })).webhook,
    remove: () => session.api.deleteWebhook({ path: { id } }),
    changed: () => void deliveries(),
  })
  const rotate = useMutation({
    mutationFn: () => session.api.rotateWebhookSecret({ path: { id } }),
    onSuccess: (rotated) => {
      setSecret(rotated.secret)
      void deliveries()
    },
  })
  const h = record.data
  return (
    <>
      <p>
        <a href="#webhooks">All webhooks</a>
      </p>
      <ErrorText error={record.error ?? toggle.error ?? rotate.error ?? remove.error} />
      {h && (
        <>
          <h2 className="hook-url">{h.url}</h2>
          {secret && (
            <SecretOnce
              secret={secret}
              what="signing secret"
              testId="webhook-secret"
              onDone={() => setSecret('')}
            >
              Your endpoint verifies each delivery's signature with it. Rotate it if it is lost.
            </SecretOnce>
          )}
          <dl className="facts app-facts">
            <dt>Description</dt>
            <dd>{h.description ?? '—'}</dd>
            <dt>Events</dt>
            <dd>{h.events.includes('*') ? 'All events' : h.events.join(', ')}</dd>
            <dt>State</dt>
            <dd>
              <StateText hook={h} />
            </dd>
            <dt>Created</dt>
            <dd>{formatDate(h.createdAt)}</dd>
          </dl>
          <div className="row">
            <EnableButton enabled={h.enabled} toggle={toggle} />
            <ConfirmButton
              label="Rotate secret"
              confirm="The old secret keeps signing beside the new one for 24 hours. Rotate?"
              onConfirm={() => rotate.mutate()}
            />
            <DeleteButton
              label="Delete webhook"
              confirm="Delete this endpoint and its delivery log?"
              remove={remove}
            />
          </div>
          <Deliveries id={id} enabled={h.enabled} />
          <SettingsSection id="hook-settings-h" saved={update.isSuccess}>
            <WebhookForm
              key={h.updatedAt}
              initial={h}
              submitLabel="Save webhook"
              {...formOf(update)}
            />
          </SettingsSection>
        </>
      )}
    </>
  )
}
