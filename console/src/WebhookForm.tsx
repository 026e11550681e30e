// The fields of a webhook endpoint (CONTRACT §13), for creating one and for editing it: its
// URL, a description, and the events it receives: "All events" (["*"], which includes
// actions added later) or a choice among the audit actions, the service's own list
// (actions.ts), so the picker cannot offer a name the API refuses. The API checks the rest
// and its messages are shown beside the field they name.
import { useState } from 'react'
import { AUDIT_ACTIONS } from './actions.ts'
import type { Schemas } from './api.ts'
import { Check, type FormProps, fieldsOf, SubmitButton, submitted, TextField } from './fields.tsx'
import { changedFrom, ErrorText, FieldError, formErrors } from './ui.tsx'

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

export function WebhookForm(props: FormProps<Webhook>) {
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, FIELDS)
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft({ ...draft, [key]: value })
  const toggle = (action: string, on: boolean) =>
    set('events', on ? [...draft.events, action] : draft.events.filter((a) => a !== action))
  const submit = submitted(() => props.onSubmit(bodyOf(draft, initial && draftOf(initial))))
  const id = initial ? `hook-${initial.id}` : 'new-hook'
  const eventErrors = errors.of('events')
  const text = fieldsOf(id, draft, set, errors)
  return (
    <form className="settings hook-form" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      <TextField
        label="Endpoint URL"
        hint="Where the events are sent (POST): an https URL."
        type="url"
        required
        maxLength={2000}
        {...text('url')}
      />
      <TextField label="Description (optional)" maxLength={500} {...text('description')} />
      <fieldset
        className="event-picker"
        aria-describedby={eventErrors.length ? `${id}-events-error` : undefined}
      >
        <legend>Events</legend>
        <Check
          id={`${id}-all`}
          name={`${id}-scope`}
          checked={draft.all}
          onChange={() => set('all', true)}
          label="All events, and those added later"
        />
        <Check
          id={`${id}-chosen`}
          name={`${id}-scope`}
          checked={!draft.all}
          onChange={() => set('all', false)}
          label="Only the events chosen below"
        />
        {!draft.all && (
          <fieldset className="event-list">
            <legend>
              Audit actions ({draft.events.length} of {AUDIT_ACTIONS.length} chosen)
            </legend>
            {AUDIT_ACTIONS.map((action) => (
              <Check
                key={action}
                id={`${id}-event-${action}`}
                checked={draft.events.includes(action)}
                onChange={(checked) => toggle(action, checked)}
                label={action}
              />
            ))}
          </fieldset>
        )}
        <FieldError id={`${id}-events-error`} messages={eventErrors} />
      </fieldset>
      {!initial && (
        <Check
          id={`${id}-enabled`}
          checked={draft.enabled}
          onChange={(checked) => set('enabled', checked)}
          label="Enabled: send events from now on"
        />
      )}
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}
