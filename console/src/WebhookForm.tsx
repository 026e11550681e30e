// The fields of a webhook endpoint (CONTRACT §13), for creating one and for editing it: its
// URL, a description, and the events it receives: "All events" (["*"], which includes
// actions added later) or a choice among the audit actions, the service's own list
// (actions.ts), so the picker cannot offer a name the API refuses. The API checks the rest
// and its messages are shown beside the field they name.
import { type FormEvent, useState } from 'react'
import { AUDIT_ACTIONS } from './actions.ts'
import type { Schemas } from './api.ts'
import { changedFrom, described, ErrorText, FieldError, formErrors } from './ui.tsx'

type Webhook = Schemas['Webhook']

export interface Draft {
  url: string
  description: string
  enabled: boolean
  all: boolean
  events: string[]
}

const FIELDS = ['url', 'description', 'enabled', 'events']

export function draftOf(hook?: Webhook): Draft {
  const all = !hook || hook.events.includes('*')
  return {
    url: hook?.url ?? '',
    description: hook?.description ?? '',
    enabled: hook?.enabled ?? true,
    all,
    events: all ? [] : (hook?.events ?? []),
  }
}

/** The body for the API; on edit only what changed from `stored` (enabling has its button). */
export function bodyOf(draft: Draft, stored?: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = {
    url: draft.url.trim(),
    // In the order of the list, whatever order they were ticked in.
    events: draft.all ? ['*'] : AUDIT_ACTIONS.filter((a) => draft.events.includes(a)),
    // On edit an emptied description removes it; on create it is left out.
    description: draft.description.trim() || (stored ? null : undefined),
    ...(stored ? {} : { enabled: draft.enabled }),
  }
  if (!stored) return body
  return changedFrom(body, bodyOf(stored))
}

export function WebhookForm(props: {
  initial?: Webhook
  submitLabel: string
  pending: boolean
  error: unknown
  onSubmit(body: Record<string, unknown>): void
}) {
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, FIELDS)
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft({ ...draft, [key]: value })
  const toggle = (action: string, on: boolean) =>
    set('events', on ? [...draft.events, action] : draft.events.filter((a) => a !== action))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    props.onSubmit(bodyOf(draft, initial && draftOf(initial)))
  }
  const id = initial ? `hook-${initial.id}` : 'new-hook'
  const eventErrors = errors.of('events')
  return (
    <form className="settings hook-form" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      <label htmlFor={`${id}-url`}>Endpoint URL</label>
      <p className="hint" id={`${id}-url-hint`}>
        Where the events are sent (POST): an https URL.
      </p>
      <input
        id={`${id}-url`}
        type="url"
        value={draft.url}
        onChange={(e) => set('url', e.target.value)}
        required
        maxLength={2000}
        {...described(`${id}-url-error`, errors.of('url'), `${id}-url-hint`)}
      />
      <FieldError id={`${id}-url-error`} messages={errors.of('url')} />
      <label htmlFor={`${id}-description`}>Description (optional)</label>
      <input
        id={`${id}-description`}
        value={draft.description}
        onChange={(e) => set('description', e.target.value)}
        maxLength={500}
        {...described(`${id}-description-error`, errors.of('description'))}
      />
      <FieldError id={`${id}-description-error`} messages={errors.of('description')} />
      <fieldset
        className="event-picker"
        aria-describedby={eventErrors.length ? `${id}-events-error` : undefined}
      >
        <legend>Events</legend>
        <div className="check">
          <input
            type="radio"
            id={`${id}-all`}
            name={`${id}-scope`}
            checked={draft.all}
            onChange={() => set('all', true)}
          />
          <label htmlFor={`${id}-all`}>All events, and those added later</label>
        </div>
        <div className="check">
          <input
            type="radio"
            id={`${id}-chosen`}
            name={`${id}-scope`}
            checked={!draft.all}
            onChange={() => set('all', false)}
          />
          <label htmlFor={`${id}-chosen`}>Only the events chosen below</label>
        </div>
        {!draft.all && (
          <fieldset className="event-list">
            <legend>
              Audit actions ({draft.events.length} of {AUDIT_ACTIONS.length} chosen)
            </legend>
            {AUDIT_ACTIONS.map((action) => (
              <div className="check" key={action}>
                <input
                  type="checkbox"
                  id={`${id}-event-${action}`}
                  checked={draft.events.includes(action)}
                  onChange={(e) => toggle(action, e.target.checked)}
                />
                <label htmlFor={`${id}-event-${action}`}>{action}</label>
              </div>
            ))}
          </fieldset>
        )}
        <FieldError id={`${id}-events-error`} messages={eventErrors} />
      </fieldset>
      {!initial && (
        <div className="check">
          <input
            type="checkbox"
            id={`${id}-enabled`}
            checked={draft.enabled}
            onChange={(e) => set('enabled', e.target.checked)}
          />
          <label htmlFor={`${id}-enabled`}>Enabled: send events from now on</label>
        </div>
      )}
      <button type="submit" className="primary" disabled={props.pending}>
        {props.submitLabel}
      </button>
    </form>
  )
}
