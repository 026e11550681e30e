// The fields of a blocking hook (CONTRACT §21), for registering one and for editing it: the
// event (chosen once: among those the workspace has no hook for), the endpoint's URL, how
// long a sign-in waits for it and what a failure means. The API checks the rest and its
// messages are shown beside the field they name (409 hook_exists at the event).
import { useState } from 'react'
import type { Schemas } from './api.ts'
import { Check, type FormProps, fieldsOf, SubmitButton, submitted, TextField } from './fields.tsx'
import { changedFrom, described, ErrorText, FieldError, formErrors } from './ui.tsx'

type Hook = Schemas['Hook']
export type HookEvent = Hook['event']
type OnFailure = Hook['onFailure']

/** Each event, what it is asked for, and what a failure means by default (CONTRACT §21). */
export const EVENTS: { event: HookEvent; label: string; does: string; onFailure: OnFailure }[] = [
  {
    event: 'before_sign_up',
    label: 'Before sign-up',
    does: 'Asked before an account is made (sign-up, invitation, first SSO or social sign-in); may refuse it.',
    onFailure: 'deny',
  },
  {
    event: 'before_sign_in',
    label: 'Before sign-in',
    does: 'Asked once every factor of a sign-in is proven; may refuse it.',
    onFailure: 'deny',
  },
  {
    event: 'custom_access_token',
    label: 'Access token claims',
    does: 'Asked at every access token (sign-in and refresh); answers claims to add.',
    onFailure: 'allow',
  },
]

export const eventLabel = (event: HookEvent) =>
  EVENTS.find((e) => e.event === event)?.label ?? event

/** What a real call's failure (a timeout, a non-2xx, an unreadable answer) leads to. */
export function failureText(event: HookEvent, onFailure: OnFailure): string {
  if (onFailure === 'deny') {
    return event === 'custom_access_token' ? 'No token is issued' : 'Refused'
  }
  return event === 'custom_access_token' ? 'Token issued without claims' : 'Let through'
}

interface Draft {
  event: HookEvent
  url: string
  timeoutMs: string
  onFailure: OnFailure
  enabled: boolean
}

const FIELDS = ['event', 'url', 'timeoutMs', 'onFailure', 'enabled']

function draftOf(hook: Hook | undefined, event: HookEvent): Draft {
  return {
    event: hook?.event ?? event,
    url: hook?.url ?? '',
    timeoutMs: String(hook?.timeoutMs ?? 2000),
    onFailure: hook?.onFailure ?? (EVENTS.find((e) => e.event === event)?.onFailure as OnFailure),
    enabled: hook?.enabled ?? true,
  }
}

/** The body for the API; on edit only what changed (enabling has its button). */
function bodyOf(draft: Draft, stored?: Draft): Record<string, unknown> {
  // Not a number is sent as it is, so the API's message says what it must be.
  const ms = draft.timeoutMs.trim()
  const timeout = ms !== '' && !Number.isNaN(Number(ms)) ? Number(ms) : ms
  const body: Record<string, unknown> = {
    url: draft.url.trim(),
    timeoutMs: timeout,
    onFailure: draft.onFailure,
  }
  if (!stored) return { event: draft.event, ...body, enabled: draft.enabled }
  return changedFrom(body, bodyOf(stored))
}

export function HookForm(
  props: FormProps<Hook> & {
    /** On create: the events the workspace has no hook for yet. */
    events?: HookEvent[]
  },
) {
  const { initial } = props
  const offered = EVENTS.filter((e) => !props.events || props.events.includes(e.event))
  const [draft, setDraft] = useState<Draft>(() =>
    draftOf(initial, offered[0]?.event ?? 'before_sign_up'),
  )
  const errors = formErrors(props.error, FIELDS, { hook_exists: 'event' })
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft({ ...draft, [key]: value })
  const submit = submitted(() =>
    props.onSubmit(bodyOf(draft, initial && draftOf(initial, initial.event))),
  )
  const id = initial ? `hook-${initial.id}` : 'new-hook'
  const chosen = EVENTS.find((e) => e.event === draft.event)
  const text = fieldsOf(id, draft, set, errors)
  return (
    <form className="settings" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      {!initial && (
        <>
          <label htmlFor={`${id}-event`}>Event</label>
          <p className="hint" id={`${id}-event-hint`}>
            {chosen?.does}
          </p>
          <select
            id={`${id}-event`}
            value={draft.event}
            onChange={(e) => {
              const event = e.target.value as HookEvent
              // The new event's default, as the API would choose it.
              const onFailure = EVENTS.find((x) => x.event === event)?.onFailure as OnFailure
              setDraft({ ...draft, event, onFailure })
            }}
            {...described(`${id}-event-error`, errors.of('event'), `${id}-event-hint`)}
          >
            {offered.map((e) => (
              <option key={e.event} value={e.event}>
                {e.label} ({e.event})
              </option>
            ))}
          </select>
          <FieldError id={`${id}-event-error`} messages={errors.of('event')} />
        </>
      )}
      <TextField
        label="Endpoint URL"
        hint="Where the call is sent (POST), signed with the hook's secret: an https URL."
        type="url"
        required
        maxLength={2000}
        {...text('url')}
      />
      <TextField
        id={`${id}-timeout`}
        label="Timeout (milliseconds)"
        hint="How long a sign-in waits for the answer: 100 to 5000."
        className="short"
        type="number"
        min={100}
        max={5000}
        step={100}
        value={draft.timeoutMs}
        onChange={(value) => set('timeoutMs', value)}
        required
        messages={errors.of('timeoutMs')}
      />
      <fieldset
        className="choice"
        aria-describedby={errors.of('onFailure').length ? `${id}-failure-error` : undefined}
      >
        <legend>When a call fails or times out</legend>
        {(['deny', 'allow'] as const).map((value) => (
          <Check
            key={value}
            id={`${id}-failure-${value}`}
            name={`${id}-failure`}
            checked={draft.onFailure === value}
            onChange={() => set('onFailure', value)}
            label={`${failureText(draft.event, value)} (${value})`}
          />
        ))}
        <FieldError id={`${id}-failure-error`} messages={errors.of('onFailure')} />
      </fieldset>
      {!initial && (
        <Check
          id={`${id}-enabled`}
          checked={draft.enabled}
          onChange={(checked) => set('enabled', checked)}
          label="Enabled: call it from now on"
        />
      )}
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}
