// The fields of an application (CONTRACT §11), for creating one and for editing it: the
// API checks them and its messages are shown beside the field they name. URIs are one a
// line; a machine app has scopes instead of browser redirects. "Security" holds CONTRACT
// §22's settings: client authentication (and the keys of private_key_jwt), PAR, DPoP,
// token exchange and the FAPI 2.0 profile, each offered only to the types it fits.
import { useState } from 'react'
import type { Schemas } from './api.ts'
import { Check, type FormProps, fieldsOf, SubmitButton, submitted, TextField } from './fields.tsx'
import { SamlForm } from './SamlApplication.tsx'
import { changedFrom, described, ErrorText, FieldError, formErrors } from './ui.tsx'

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
  tokenEndpointAuthMethod: Application['tokenEndpointAuthMethod']
  jwksUri: string
  /** The JWK Set as JSON text. */
  jwks: string
  requirePar: boolean
  requireDpop: boolean
  tokenExchange: boolean
  fapi2: boolean
}

type AuthMethod = Application['tokenEndpointAuthMethod']
const AUTH_METHODS: [AuthMethod, string][] = [
  ['client_secret_basic', 'Client secret (HTTP Basic)'],
  ['client_secret_post', 'Client secret (in the request body)'],
  ['private_key_jwt', 'Private key JWT (RFC 7523)'],
]
const confidential = (type: AppType) => type === 'web' || type === 'machine'

export const TYPES: [AppType, string][] = [
  ['web', 'Web: a server-side app with a secret'],
  ['spa', 'Single-page app: in the browser, no secret'],
  ['native', 'Native: a mobile or desktop app, no secret'],
  ['machine', 'Machine: a back end getting tokens by client credentials'],
  ['saml', 'SAML: a service provider this workspace signs people in to'],
]

const FIELDS = [
  'name',
  'type',
  'redirectUris',
  'postLogoutRedirectUris',
  'backchannelLogoutUri',
  'firstParty',
  'allowedScopes',
  'tokenEndpointAuthMethod',
  'jwks',
  'jwksUri',
  'requirePushedAuthorizationRequests',
  'requireDpop',
  'tokenExchange',
  'profile',
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
    tokenEndpointAuthMethod: app?.tokenEndpointAuthMethod ?? 'client_secret_basic',
    jwksUri: app?.jwksUri ?? '',
    jwks: app?.jwks ? JSON.stringify(app.jwks, null, 2) : '',
    requirePar: app?.requirePushedAuthorizationRequests ?? false,
    requireDpop: app?.requireDpop ?? false,
    tokenExchange: app?.tokenExchange ?? false,
    fapi2: app?.profile === 'fapi2',
  }
}

/** A JWK Set typed as JSON; text that is no JSON goes as it is, for the API to name. */
function parsedJwks(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** CONTRACT §22's fields of the body (the API refuses what does not fit the type). */
function securityOf(draft: Draft, editing: boolean): Record<string, unknown> {
  if (!confidential(draft.type)) return { requireDpop: draft.requireDpop }
  // The FAPI 2.0 profile implies PAR and DPoP (the API refuses them turned off beside it).
  const fapi = draft.type === 'web' && draft.fapi2
  const keyed = draft.tokenEndpointAuthMethod === 'private_key_jwt'
  const empty = editing ? null : undefined
  return {
    tokenEndpointAuthMethod: draft.tokenEndpointAuthMethod,
    ...(keyed
      ? {
          jwksUri: draft.jwksUri.trim() || empty,
          jwks: draft.jwks.trim() ? parsedJwks(draft.jwks) : empty,
        }
      : {}),
    ...(draft.type === 'web'
      ? { requirePushedAuthorizationRequests: fapi || draft.requirePar }
      : {}),
    requireDpop: fapi || draft.requireDpop,
    tokenExchange: draft.tokenExchange,
    ...(draft.type === 'web' ? { profile: draft.fapi2 ? 'fapi2' : empty } : {}),
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
          ...(draft.type === 'spa' || draft.type === 'native'
            ? { requirePushedAuthorizationRequests: draft.requirePar }
            : {}),
        }),
    ...securityOf(draft, stored !== undefined),
  }
  if (!stored) return body
  return changedFrom(body, bodyOf(stored))
}

export function ApplicationForm(props: FormProps<Application>) {
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, FIELDS)
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft({ ...draft, [key]: value })
  const submit = submitted(() => props.onSubmit(bodyOf(draft, initial && draftOf(initial))))
  const id = initial ? `app-${initial.id}` : 'new-app'
  const text = fieldsOf(id, draft, set, errors)
  const uriList = (field: 'redirectUris' | 'postLogoutRedirectUris', label: string) => (
    <TextField label={label} hintId={`${id}-uri-hint`} rows={3} {...text(field)} />
  )
  const typeSelect = !initial && (
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
  )
  // CONTRACT §22: a saml application has fields of its own.
  if (draft.type === 'saml') {
    return (
      <SamlForm
        initial={initial}
        typeSelect={typeSelect}
        submitLabel={props.submitLabel}
        pending={props.pending}
        error={props.error}
        onSubmit={props.onSubmit}
      />
    )
  }
  return (
    <form className="settings" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      <TextField label="Name" required maxLength={200} {...text('name')} />
      {typeSelect}
      {draft.type === 'machine' ? (
        <TextField
          id={`${id}-scopes`}
          label="Allowed scopes"
          hint="Scopes of your API resources this app may get, separated by spaces."
          value={draft.allowedScopes}
          onChange={(value) => set('allowedScopes', value)}
          messages={errors.of('allowedScopes')}
        />
      ) : (
        <>
          <p className="hint" id={`${id}-uri-hint`}>
            One URI a line: https, or http on localhost
            {draft.type === 'native' ? ', or an app scheme such as com.example.app:/callback' : ''}.
          </p>
          {uriList('redirectUris', 'Redirect URIs')}
          {uriList('postLogoutRedirectUris', 'Post-logout redirect URIs')}
          <TextField
            id={`${id}-backchannel`}
            label="Back-channel logout URI (optional)"
            type="url"
            value={draft.backchannelLogoutUri}
            onChange={(value) => set('backchannelLogoutUri', value)}
            messages={errors.of('backchannelLogoutUri')}
          />
          <Check
            id={`${id}-first-party`}
            checked={draft.firstParty}
            onChange={(checked) => set('firstParty', checked)}
            label="First-party: no consent page"
          />
        </>
      )}
      <Security id={id} draft={draft} set={set} errors={errors} />
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}

type SetField = <K extends keyof Draft>(key: K, value: Draft[K]) => void

/** CONTRACT §22: how the app authenticates and which protections it must use. */
function Security(props: {
  id: string
  draft: Draft
  set: SetField
  errors: ReturnType<typeof formErrors>
}) {
  const { id, draft, set, errors } = props
  const secret = confidential(draft.type)
  const keyed = secret && draft.tokenEndpointAuthMethod === 'private_key_jwt'
  const fapi = draft.type === 'web' && draft.fapi2
  const messages = (field: string) => errors.of(field)
  return (
    <fieldset className="security">
      <legend>Security</legend>
      {secret ? (
        <>
          <label htmlFor={`${id}-auth`}>Client authentication</label>
          <select
            id={`${id}-auth`}
            value={draft.tokenEndpointAuthMethod}
            onChange={(e) => set('tokenEndpointAuthMethod', e.target.value as AuthMethod)}
            {...described(`${id}-auth-error`, messages('tokenEndpointAuthMethod'))}
          >
            {AUTH_METHODS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          <FieldError id={`${id}-auth-error`} messages={messages('tokenEndpointAuthMethod')} />
        </>
      ) : (
        <p className="hint">Public client: no client authentication (PKCE instead).</p>
      )}
      {keyed && (
        <>
          <p className="hint" id={`${id}-keys-hint`}>
            Your public keys: a JWKS URL the service fetches, or the JWK Set itself. One of them.
          </p>
          <TextField
            id={`${id}-jwks-uri`}
            label="JWKS URL"
            hintId={`${id}-keys-hint`}
            type="url"
            value={draft.jwksUri}
            onChange={(value) => set('jwksUri', value)}
            messages={messages('jwksUri')}
          />
          <TextField
            id={`${id}-jwks`}
            label="JWK Set (JSON)"
            hintId={`${id}-keys-hint`}
            rows={4}
            value={draft.jwks}
            onChange={(value) => set('jwks', value)}
            messages={messages('jwks')}
          />
        </>
      )}
      {draft.type === 'web' && (
        <Check
          id={`${id}-fapi2`}
          checked={draft.fapi2}
          onChange={(checked) => set('fapi2', checked)}
          label="FAPI 2.0 profile: PAR, PKCE, DPoP and private key JWT required"
        />
      )}
      <FieldError id={`${id}-profile-error`} messages={messages('profile')} />
      {draft.type !== 'machine' && (
        <Check
          id={`${id}-par`}
          checked={fapi || draft.requirePar}
          disabled={fapi}
          onChange={(checked) => set('requirePar', checked)}
          label="Require pushed authorization requests (PAR)"
        />
      )}
      <FieldError
        id={`${id}-par-error`}
        messages={messages('requirePushedAuthorizationRequests')}
      />
      <Check
        id={`${id}-dpop`}
        checked={fapi || draft.requireDpop}
        disabled={fapi}
        onChange={(checked) => set('requireDpop', checked)}
        label="Require DPoP: sender-constrained tokens only"
      />
      <FieldError id={`${id}-dpop-error`} messages={messages('requireDpop')} />
      {secret && (
        <Check
          id={`${id}-exchange`}
          checked={draft.tokenExchange}
          onChange={(checked) => set('tokenExchange', checked)}
          label="Token exchange: may trade a user’s token for one to another API"
        />
      )}
      <FieldError id={`${id}-exchange-error`} messages={messages('tokenExchange')} />
    </fieldset>
  )
}
