// The fields of a social connection (CONTRACT §19), for adding one and for editing it: the
// client of the provider (id and a write-only secret), the button's name, scopes, order and
// switches, and what only some providers take: `issuer` (oidc, required; gitlab, a
// self-managed instance), `endpoints` (oauth2, three required; github, GitHub Enterprise
// Server's three or none) and `claims` (oauth2). The API checks everything and its messages
// are shown beside the field they name. On edit the body holds only what changed, and the
// client secret only when a new one is typed (the stored one is kept otherwise); an issuer,
// endpoints or claims emptied on an edit are sent as null, which clears them (the API says
// when the provider needs them).
import { type ReactNode, useState } from 'react'
import { PRESETS, SOCIAL_PROVIDERS } from '../../src/modules/federation/social/presets.ts'
import type { Schemas } from './api.ts'
import { Check, type FormProps, SubmitButton, submitted, TextField } from './fields.tsx'
import { changedFrom, ErrorText, FieldError, formErrors } from './ui.tsx'

type Connection = Schemas['SocialConnection']
export type Provider = Connection['provider']

/** Where a provider's administrator makes the client a connection uses. */
const WHERE: Record<Provider, string> = {
  google: 'An OAuth client ID of type “Web application” in the Google Cloud console.',
  microsoft:
    'An app registration in Microsoft Entra ID, with a client secret and the web redirect URI.',
  apple:
    'A Services ID with Sign in with Apple, and a key for it (Certificates, Identifiers & Profiles).',
  github: 'An OAuth app in GitHub’s developer settings, or in GitHub Enterprise Server.',
  gitlab: 'An application in GitLab (gitlab.com or a self-managed instance).',
  discord: 'An application in the Discord Developer Portal, with its OAuth2 settings.',
  slack: 'A Slack app with “Sign in with Slack” (OpenID Connect).',
  linkedin: 'A LinkedIn app with “Sign In with LinkedIn using OpenID Connect”.',
  facebook: 'A Meta app with Facebook Login.',
  oidc: 'Any OpenID Connect provider: its issuer URL and a client registered there.',
  oauth2: 'Any OAuth 2.0 provider: its endpoints, and where its profile holds the id and address.',
}

/**
 * The providers in the API's order, by the service's own names (imported at build time, as
 * the audit actions are, so that the two cannot drift).
 */
export const PROVIDERS = SOCIAL_PROVIDERS.map((p) => ({
  value: p,
  name: PRESETS[p].label,
  where: WHERE[p],
}))

export const providerName = (p: Provider) => PRESETS[p].label

export interface Draft {
  name: string
  clientId: string
  clientSecret: string
  scopes: string
  order: string
  enabled: boolean
  allowSignUp: boolean
  linkByVerifiedEmail: boolean
  issuer: string
  authorizationUrl: string
  tokenUrl: string
  userinfoUrl: string
  apiUrl: string
  claimId: string
  claimEmail: string
  claimEmailVerified: string
  claimName: string
  appleTeamId: string
  appleKeyId: string
  applePrivateKey: string
}

type Text = { [K in keyof Draft]: Draft[K] extends string ? K : never }[keyof Draft]

const FIELDS = [
  'name',
  'clientId',
  'clientSecret',
  'scopes',
  'order',
  'issuer',
  'apple.teamId',
  'apple.keyId',
  'apple.privateKey',
]
const GROUPS = ['endpoints', 'claims', 'apple']

/** The schema's words for an empty field, said plainly. */
const REQUIRED = /^must NOT have fewer than 1 characters$/

const words = (text: string) => text.split(/\s+/).filter(Boolean)

export function draftOf(c?: Connection): Draft {
  return {
    name: c?.name ?? '',
    clientId: c?.clientId ?? '',
    clientSecret: '',
    scopes: c?.scopes.join(' ') ?? '',
    order: String(c?.order ?? 0),
    enabled: c?.enabled ?? true,
    allowSignUp: c?.allowSignUp ?? true,
    linkByVerifiedEmail: c?.linkByVerifiedEmail ?? true,
    issuer: c?.issuer ?? '',
    authorizationUrl: c?.endpoints?.authorizationUrl ?? '',
    tokenUrl: c?.endpoints?.tokenUrl ?? '',
    userinfoUrl: c?.endpoints?.userinfoUrl ?? '',
    apiUrl: c?.endpoints?.apiUrl ?? '',
    claimId: c?.claims?.id ?? '',
    claimEmail: c?.claims?.email ?? '',
    claimEmailVerified: c?.claims?.emailVerified ?? '',
    claimName: c?.claims?.name ?? '',
    appleTeamId: c?.apple?.teamId ?? '',
    appleKeyId: c?.apple?.keyId ?? '',
    applePrivateKey: '',
  }
}

/**
 * Apple's key fields (its client secret is a JWT the service signs with them): all on
 * creation; on an edit those changed, the private key when a new one is pasted.
 */
function appleOf(d: Draft, stored?: Draft) {
  const now = {
    teamId: d.appleTeamId.trim(),
    keyId: d.appleKeyId.trim(),
    privateKey: d.applePrivateKey.trim(),
  }
  if (!stored) return now
  const changed = {
    ...(now.teamId !== stored.appleTeamId ? { teamId: now.teamId } : {}),
    ...(now.keyId !== stored.appleKeyId ? { keyId: now.keyId } : {}),
    ...(now.privateKey ? { privateKey: now.privateKey } : {}),
  }
  return Object.keys(changed).length > 0 ? changed : undefined
}

/**
 * The endpoints a provider takes: oauth2's three, GitHub Enterprise Server's three. `whole`
 * (an edit of a connection that has them): GitHub's emptied are null, which clears them
 * (github.com again); oauth2's go as typed, for the API to name the ones it needs.
 */
function endpointsOf(provider: Provider, d: Draft, whole = false) {
  if (provider === 'oauth2') {
    return {
      authorizationUrl: d.authorizationUrl.trim(),
      tokenUrl: d.tokenUrl.trim(),
      userinfoUrl: d.userinfoUrl.trim(),
    }
  }
  if (provider === 'github') {
    const urls = {
      authorizationUrl: d.authorizationUrl.trim(),
      tokenUrl: d.tokenUrl.trim(),
      apiUrl: d.apiUrl.trim(),
    }
    // github.com's own endpoints unless one is typed: then all three are sent, for the API
    // to name the ones missing.
    if (Object.values(urls).some(Boolean)) return urls
    return whole ? null : undefined
  }
  return undefined
}

function claimsOf(provider: Provider, d: Draft) {
  if (provider !== 'oauth2') return undefined
  const paths = {
    id: d.claimId.trim(),
    email: d.claimEmail.trim(),
    emailVerified: d.claimEmailVerified.trim(),
    name: d.claimName.trim(),
  }
  return Object.fromEntries(Object.entries(paths).filter(([, path]) => path))
}

/**
 * The issuer typed: oidc's is always sent (the API says when it is missing), gitlab's and
 * microsoft's (its directory) when given.
 */
function issuerOf(provider: Provider, d: Draft) {
  const issuer = d.issuer.trim()
  if (provider === 'oidc') return issuer
  return (provider === 'gitlab' || provider === 'microsoft') && issuer ? issuer : undefined
}

/** Paths none of which is typed: null, the default paths (on an edit, clearing the stored ones). */
const pathsOrNull = (paths: Record<string, string> | undefined) =>
  paths === undefined ? undefined : Object.keys(paths).length ? paths : null

/** Empty scopes ask the provider's default (the API's, when a connection is made without any). */
const scopesOf = (provider: Provider, d: Draft) =>
  words(d.scopes).length ? words(d.scopes) : [...PRESETS[provider].scopes]

/** An empty order is sent as null, for the API to say what it takes. */
const orderOf = (d: Draft) => (d.order.trim() === '' ? null : Number(d.order))

/** The body for the API; on edit only what changed from `stored` (enabling has its button). */
export function bodyOf(provider: Provider, draft: Draft, stored?: Draft): Record<string, unknown> {
  if (!stored) {
    const claims = claimsOf(provider, draft)
    return {
      provider,
      name: draft.name.trim() || undefined,
      clientId: draft.clientId.trim(),
      // An empty secret is sent, for the API to name the field it needs; Apple takes none.
      ...(provider === 'apple' ? { apple: appleOf(draft) } : { clientSecret: draft.clientSecret }),
      scopes: words(draft.scopes).length ? words(draft.scopes) : undefined,
      order: orderOf(draft),
      enabled: draft.enabled,
      allowSignUp: draft.allowSignUp,
      linkByVerifiedEmail: draft.linkByVerifiedEmail,
      issuer: issuerOf(provider, draft),
      endpoints: endpointsOf(provider, draft),
      claims: claims && Object.keys(claims).length ? claims : undefined,
    }
  }
  const now: Record<string, unknown> = {
    name: draft.name.trim(),
    clientId: draft.clientId.trim(),
    scopes: scopesOf(provider, draft),
    order: orderOf(draft),
    allowSignUp: draft.allowSignUp,
    linkByVerifiedEmail: draft.linkByVerifiedEmail,
    // Emptied: null, which clears it (gitlab.com, `common`; oidc's the API says it needs).
    issuer: draft.issuer.trim() || null,
    endpoints: endpointsOf(provider, draft, Boolean(stored.authorizationUrl)),
    claims: pathsOrNull(claimsOf(provider, draft)),
  }
  const before: Record<string, unknown> = {
    name: stored.name,
    clientId: stored.clientId,
    scopes: words(stored.scopes),
    order: orderOf(stored),
    allowSignUp: stored.allowSignUp,
    linkByVerifiedEmail: stored.linkByVerifiedEmail,
    issuer: stored.issuer || null,
    endpoints: endpointsOf(provider, stored),
    claims: pathsOrNull(claimsOf(provider, stored)),
  }
  // An endpoints or claims object replaces the stored one whole, so it goes whole.
  const body = changedFrom(now, before)
  const apple = provider === 'apple' ? appleOf(draft, stored) : undefined
  if (apple) body.apple = apple
  return draft.clientSecret ? { ...body, clientSecret: draft.clientSecret } : body
}

export function SocialConnectionForm(props: FormProps<Connection> & { provider: Provider }) {
  const { provider, initial } = props
  const preset = PRESETS[provider]
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, [...FIELDS, ...GROUPS])
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft({ ...draft, [key]: value })
  const submit = submitted(() =>
    props.onSubmit(bodyOf(provider, draft, initial && draftOf(initial))),
  )
  const id = initial ? `social-${initial.id}` : 'new-social'

  /** A text field with its label, hint and the API's messages. */
  const field = (
    key: Text,
    path: string,
    label: string,
    options: { hint?: ReactNode; type?: string; rename?: string } = {},
  ) => {
    const messages = errors.of(path).map((m) =>
      // The scopes are words of one line: an issue names the scope, not a line.
      REQUIRED.test(m) ? 'Required.' : options.rename ? m.replace(/^Line/, options.rename) : m,
    )
    return (
      <TextField
        id={`${id}-${key}`}
        label={label}
        hint={options.hint}
        type={options.type ?? 'text'}
        spellCheck={false}
        value={draft[key]}
        onChange={(value) => set(key, value)}
        messages={messages}
      />
    )
  }

  /** The messages of a whole group (`endpoints: is required for oauth2`). */
  const groupError = (path: string) => (
    <FieldError id={`${id}-${path}-error`} messages={errors.of(path, true)} />
  )

  const check = (key: 'enabled' | 'allowSignUp' | 'linkByVerifiedEmail', label: string) => (
    <Check
      id={`${id}-${key}`}
      checked={draft[key]}
      onChange={(checked) => set(key, checked)}
      label={label}
    />
  )

  const defaultScopes = preset.scopes.length
    ? `Empty: the default, ${preset.scopes.join(' ')}.`
    : 'Empty: none asked.'
  // A generic provider's own name is no label people recognise.
  const generic = provider === 'oidc' || provider === 'oauth2'
  const nameHint = [
    `The button reads “Continue with ${draft.name.trim() || preset.label}”.`,
    initial ? '' : ` Empty: ${preset.label}.`,
    generic ? ' Name it after the provider people know, e.g. “Acme ID”.' : '',
  ].join('')
  return (
    <form className="settings social-form" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      {provider === 'oidc' &&
        field('issuer', 'issuer', 'Issuer URL', {
          type: 'url',
          hint: 'The provider’s issuer, e.g. https://login.example.com (its discovery document is read from there).',
        })}
      {provider === 'gitlab' &&
        field('issuer', 'issuer', 'Self-managed GitLab URL (optional)', {
          type: 'url',
          hint: initial?.issuer
            ? 'The instance this connection signs in with. Empty it to sign in with gitlab.com again.'
            : 'Empty: gitlab.com. For a self-managed instance, its URL, e.g. https://gitlab.example.com.',
        })}
      {provider === 'microsoft' &&
        field('issuer', 'issuer', 'Directory (optional)', {
          hint: 'Empty: common (any work, school or personal account). A directory (tenant) ID for one organisation only, or organizations for any work or school account.',
        })}
      {field('clientId', 'clientId', 'Client ID')}
      {provider !== 'apple' &&
        field('clientSecret', 'clientSecret', 'Client secret', {
          type: 'password',
          hint: initial?.hasClientSecret
            ? 'A secret is stored. Leave this empty to keep it, or type a new one.'
            : 'Stored sealed; never shown again.',
        })}
      {provider === 'apple' && (
        <fieldset>
          <legend>Sign in with Apple key</legend>
          <p className="hint">
            Apple takes no fixed secret: the service signs a short-lived one with this key and
            renews it. The client ID is the Services ID.
          </p>
          {groupError('apple')}
          {field('appleTeamId', 'apple.teamId', 'Team ID')}
          {field('appleKeyId', 'apple.keyId', 'Key ID')}
          <TextField
            id={`${id}-applePrivateKey`}
            label="Private key (.p8)"
            hint={
              initial?.apple?.hasPrivateKey
                ? 'A key is stored. Leave this empty to keep it, or paste a new one.'
                : 'The PEM text of the .p8 file Apple gave; stored sealed, never shown again.'
            }
            rows={5}
            spellCheck={false}
            value={draft.applePrivateKey}
            onChange={(value) => set('applePrivateKey', value)}
            messages={errors.of('apple.privateKey')}
          />
        </fieldset>
      )}
      {provider === 'oauth2' && (
        <fieldset>
          <legend>Provider endpoints</legend>
          {groupError('endpoints')}
          {field('authorizationUrl', 'endpoints.authorizationUrl', 'Authorization URL', {
            type: 'url',
          })}
          {field('tokenUrl', 'endpoints.tokenUrl', 'Token URL', { type: 'url' })}
          {field('userinfoUrl', 'endpoints.userinfoUrl', 'Userinfo URL', {
            type: 'url',
            hint: 'Where the profile is read, with the access token.',
          })}
        </fieldset>
      )}
      {provider === 'github' && (
        <fieldset>
          <legend>GitHub Enterprise Server (optional)</legend>
          <p className="hint">
            {initial?.endpoints
              ? 'This connection signs in with this GitHub Enterprise Server. Empty all three to sign in with github.com again.'
              : 'Empty for github.com. For GitHub Enterprise Server, all three: at https://github.example.com they are /login/oauth/authorize, /login/oauth/access_token and /api/v3.'}
          </p>
          {groupError('endpoints')}
          {field('authorizationUrl', 'endpoints.authorizationUrl', 'Authorization URL', {
            type: 'url',
          })}
          {field('tokenUrl', 'endpoints.tokenUrl', 'Token URL', { type: 'url' })}
          {field('apiUrl', 'endpoints.apiUrl', 'API URL', { type: 'url' })}
        </fieldset>
      )}
      {provider === 'oauth2' && (
        <fieldset>
          <legend>Profile fields</legend>
          <p className="hint">
            Dot-separated paths into the userinfo answer, such as data.user.id. Empty: id, email and
            name. Without an email-verified path no address counts as verified.
          </p>
          {groupError('claims')}
          {field('claimId', 'claims.id', 'ID path')}
          {field('claimEmail', 'claims.email', 'Email path')}
          {field('claimEmailVerified', 'claims.emailVerified', 'Email verified path')}
          {field('claimName', 'claims.name', 'Name path')}
        </fieldset>
      )}
      {field('name', 'name', initial ? 'Name' : 'Name (optional)', {
        hint: nameHint,
      })}
      {field('scopes', 'scopes', 'Scopes (optional)', {
        rename: 'Scope',
        hint: `Separated by spaces. ${defaultScopes}${preset.protocol === 'oidc' ? ' openid is always asked.' : ''}`,
      })}
      {field('order', 'order', 'Order', {
        type: 'number',
        hint: 'Buttons go in ascending order (−1000 to 1000), equal ones oldest first.',
      })}
      <fieldset className="switches">
        <legend>Sign-in</legend>
        {!initial && check('enabled', 'Enabled: its button is on the sign-in page from now on')}
        {check('allowSignUp', 'Allow sign-up: a first sign-in may create an account')}
        {check(
          'linkByVerifiedEmail',
          'Link by verified address: a first sign-in joins the account with the address the provider verified (when that account’s address is verified too)',
        )}
      </fieldset>
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}
