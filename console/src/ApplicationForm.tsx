// The fields of an application (CONTRACT §11), for creating one and for editing it: the
// API checks them and its messages are shown beside the field they name. URIs are one a
// line; a machine app has scopes instead of browser redirects.
import { type FormEvent, useState } from 'react'
import type { Schemas } from './api.ts'
import { described, ErrorText, FieldError, formErrors } from './ui.tsx'

type Application = Schemas['Application']
type AppType = Application['type']

export interface Draft {
  name: string
  type: AppType
  redirectUris: string
  postLogoutRedirectUris: string
  backchannelLogoutUri: string
  firstParty: boolean
  allowedScopes: string
}

export const TYPES: [AppType, string][] = [
  ['web', 'Web: a server-side app with a secret'],
  ['spa', 'Single-page app: in the browser, no secret'],
  ['native', 'Native: a mobile or desktop app, no secret'],
  ['machine', 'Machine: a back end getting tokens by client credentials'],
]

const FIELDS = [
  'name',
  'type',
  'redirectUris',
  'postLogoutRedirectUris',
  'backchannelLogoutUri',
  'firstParty',
  'allowedScopes',
]

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
const words = (text: string) => text.split(/\s+/).filter(Boolean)

export function draftOf(app?: Application): Draft {
  return {
    name: app?.name ?? '',
    type: app?.type ?? 'web',
    redirectUris: app?.redirectUris.join('\n') ?? '',
    postLogoutRedirectUris: app?.postLogoutRedirectUris.join('\n') ?? '',
    backchannelLogoutUri: app?.backchannelLogoutUri ?? '',
    firstParty: app?.firstParty ?? true,
    allowedScopes: app?.allowedScopes.join(' ') ?? '',
  }
}

/** The body for the API: what the type has, and on edit only what changed from `stored`. */
export function bodyOf(draft: Draft, stored?: Draft): Record<string, unknown> {
  const machine = draft.type === 'machine'
  const body: Record<string, unknown> = {
    name: draft.name,
    ...(stored ? {} : { type: draft.type }),
    ...(machine
      ? { allowedScopes: words(draft.allowedScopes) }
      : {
          redirectUris: lines(draft.redirectUris),
          postLogoutRedirectUris: lines(draft.postLogoutRedirectUris),
          firstParty: draft.firstParty,
          // On edit an emptied field removes the URI; on create it is left out.
          backchannelLogoutUri: draft.backchannelLogoutUri.trim() || (stored ? null : undefined),
        }),
  }
  if (!stored) return body
  const before = bodyOf(stored)
  return Object.fromEntries(
    Object.entries(body).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(before[k])),
  )
}

export function ApplicationForm(props: {
  initial?: Application
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
  const submit = (event: FormEvent) => {
    event.preventDefault()
    props.onSubmit(bodyOf(draft, initial && draftOf(initial)))
  }
  const id = initial ? `app-${initial.id}` : 'new-app'
  const uriList = (field: 'redirectUris' | 'postLogoutRedirectUris', label: string) => (
    <>
      <label htmlFor={`${id}-${field}`}>{label}</label>
      <textarea
        id={`${id}-${field}`}
        rows={3}
        value={draft[field]}
        onChange={(e) => set(field, e.target.value)}
        {...described(`${id}-${field}-error`, errors.of(field), `${id}-uri-hint`)}
      />
      <FieldError id={`${id}-${field}-error`} messages={errors.of(field)} />
    </>
  )
  return (
    <form className="settings" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      <label htmlFor={`${id}-name`}>Name</label>
      <input
        id={`${id}-name`}
        value={draft.name}
        onChange={(e) => set('name', e.target.value)}
        required
        maxLength={200}
        {...described(`${id}-name-error`, errors.of('name'))}
      />
      <FieldError id={`${id}-name-error`} messages={errors.of('name')} />
      {!initial && (
        <>
          <label htmlFor={`${id}-type`}>Type</label>
          <select
            id={`${id}-type`}
            value={draft.type}
            onChange={(e) => set('type', e.target.value as AppType)}
          >
            {TYPES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </>
      )}
      {draft.type === 'machine' ? (
        <>
          <label htmlFor={`${id}-scopes`}>Allowed scopes</label>
          <p className="hint" id={`${id}-scopes-hint`}>
            Scopes of your API resources this app may get, separated by spaces.
          </p>
          <input
            id={`${id}-scopes`}
            value={draft.allowedScopes}
            onChange={(e) => set('allowedScopes', e.target.value)}
            {...described(`${id}-scopes-error`, errors.of('allowedScopes'), `${id}-scopes-hint`)}
          />
          <FieldError id={`${id}-scopes-error`} messages={errors.of('allowedScopes')} />
        </>
      ) : (
        <>
          <p className="hint" id={`${id}-uri-hint`}>
            One URI a line: https, or http on localhost
            {draft.type === 'native' ? ', or an app scheme such as com.example.app:/callback' : ''}.
          </p>
          {uriList('redirectUris', 'Redirect URIs')}
          {uriList('postLogoutRedirectUris', 'Post-logout redirect URIs')}
          <label htmlFor={`${id}-backchannel`}>Back-channel logout URI (optional)</label>
          <input
            id={`${id}-backchannel`}
            type="url"
            value={draft.backchannelLogoutUri}
            onChange={(e) => set('backchannelLogoutUri', e.target.value)}
            {...described(`${id}-backchannel-error`, errors.of('backchannelLogoutUri'))}
          />
          <FieldError id={`${id}-backchannel-error`} messages={errors.of('backchannelLogoutUri')} />
          <div className="check">
            <input
              type="checkbox"
              id={`${id}-first-party`}
              checked={draft.firstParty}
              onChange={(e) => set('firstParty', e.target.checked)}
            />
            <label htmlFor={`${id}-first-party`}>First-party: no consent page</label>
          </div>
        </>
      )}
      <button type="submit" className="primary" disabled={props.pending}>
        {props.submitLabel}
      </button>
    </form>
  )
}
