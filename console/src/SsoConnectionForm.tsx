// The fields of an SSO connection (CONTRACT §12), for creating one and for editing it: its
// name, OIDC (issuer, client id and secret, scopes) or SAML (the IdP's metadata XML pasted,
// or its entity ID, sign-in URL and certificates), the email domains it owns (one a line),
// its switches, its roleMapping (CONTRACT §17: one rule a line, `claim=value: Role, Role`),
// and the organization its sign-ins join (CONTRACT §18), chosen among the workspace's.
// The API checks everything and its messages are shown beside the field
// they name; 409 domain_taken goes to the domains. On edit the body holds only what changed,
// and the client secret only when a new one is typed (the stored one is kept otherwise).
import { useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { Check, type FormProps, SubmitButton, submitted, TextField } from './fields.tsx'
import { changedFrom, described, ErrorText, FieldError, formErrors, usePages } from './ui.tsx'

type Connection = Schemas['SsoConnection']
type Kind = Connection['type']
type Role = Connection['defaultRole']

export interface Draft {
  name: string
  type: Kind
  domains: string
  enabled: boolean
  jitProvisioning: boolean
  defaultRole: Role
  enforce: boolean
  mfaSatisfied: boolean
  issuer: string
  clientId: string
  clientSecret: string
  scopes: string
  samlFrom: 'metadata' | 'fields'
  idpMetadataXml: string
  idpEntityId: string
  idpSsoUrl: string
  idpCertificates: string
  roleMapping: string
  /** '' for none. */
  organizationId: string
}

export const TYPES: [Kind, string][] = [
  ['oidc', 'OpenID Connect'],
  ['saml', 'SAML 2.0'],
]

export const typeName = (type: Kind) => TYPES.find(([value]) => value === type)?.[1] ?? type

const FIELDS = [
  'name',
  'type',
  'domains',
  'defaultRole',
  'oidc.issuer',
  'oidc.clientId',
  'oidc.clientSecret',
  'oidc.scopes',
  'saml.idpMetadataXml',
  'saml.idpEntityId',
  'saml.idpSsoUrl',
  'saml.idpCertificates',
  'roleMapping',
  'organizationId',
]

/** The schema's words for an empty field or list, said plainly. */
const REQUIRED = /^must NOT have fewer than 1 (characters|items)$/

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
const words = (text: string) => text.split(/\s+/).filter(Boolean)

/**
 * The PEM certificates pasted one after another; text without any PEM block is sent as it
 * is, so that the API says what is wrong with it.
 */
function certificates(text: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)
  if (blocks) return blocks
  return text.trim() ? [text.trim()] : []
}

export function draftOf(c?: Connection): Draft {
  return {
    name: c?.name ?? '',
    type: c?.type ?? 'oidc',
    domains: c?.domains.join('\n') ?? '',
    enabled: c?.enabled ?? true,
    jitProvisioning: c?.jitProvisioning ?? true,
    defaultRole: c?.defaultRole ?? 'Member',
    enforce: c?.enforce ?? false,
    mfaSatisfied: c?.mfaSatisfied ?? false,
    issuer: c?.oidc?.issuer ?? '',
    clientId: c?.oidc?.clientId ?? '',
    clientSecret: '',
    scopes: c?.oidc?.scopes.join(' ') ?? 'openid email profile',
    samlFrom: c ? 'fields' : 'metadata',
    idpMetadataXml: '',
    idpEntityId: c?.saml?.idpEntityId ?? '',
    idpSsoUrl: c?.saml?.idpSsoUrl ?? '',
    idpCertificates: c?.saml?.idpCertificates.join('\n') ?? '',
    roleMapping: (c?.roleMapping ?? [])
      .map((rule) => `${rule.claim}=${rule.value}: ${rule.roles.join(', ')}`)
      .join('\n'),
    organizationId: c?.organizationId ?? '',
  }
}

/**
 * The roleMapping lines (`claim=value: Role, Role`) as rules; a line without `=` is sent
 * with an empty value, for the API to say what is missing.
 */
export function rulesOf(text: string) {
  return lines(text).map((line) => {
    const colon = line.indexOf(':')
    const head = colon < 0 ? line : line.slice(0, colon)
    const roles =
      colon < 0
        ? []
        : line
            .slice(colon + 1)
            .split(',')
            .map((r) => r.trim())
            .filter(Boolean)
    const eq = head.indexOf('=')
    return eq < 0
      ? { claim: head.trim(), value: '', roles }
      : { claim: head.slice(0, eq).trim(), value: head.slice(eq + 1).trim(), roles }
  })
}

/** Only the entries of `block` that differ from `before`'s; undefined when none do. */
function changed(block: Record<string, unknown>, before: Record<string, unknown>) {
  const diff = changedFrom(block, before)
  return Object.keys(diff).length ? diff : undefined
}

function protocolBlock(draft: Draft): Record<string, unknown> {
  if (draft.type === 'oidc') {
    return {
      oidc: {
        issuer: draft.issuer.trim(),
        clientId: draft.clientId.trim(),
        clientSecret: draft.clientSecret || undefined,
        scopes: words(draft.scopes),
      },
    }
  }
  return {
    saml:
      draft.samlFrom === 'metadata'
        ? { idpMetadataXml: draft.idpMetadataXml.trim() }
        : {
            idpEntityId: draft.idpEntityId.trim(),
            idpSsoUrl: draft.idpSsoUrl.trim(),
            idpCertificates: certificates(draft.idpCertificates),
          },
  }
}

/** The body for the API; on edit only what changed from `stored` (enabling has its button). */
export function bodyOf(draft: Draft, stored?: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: draft.name.trim(),
    domains: lines(draft.domains),
    jitProvisioning: draft.jitProvisioning,
    defaultRole: draft.defaultRole,
    enforce: draft.enforce,
    mfaSatisfied: draft.mfaSatisfied,
    roleMapping: rulesOf(draft.roleMapping),
    // On edit none is null (the sign-ins stop joining it); on create it is left out.
    organizationId: draft.organizationId || (stored ? null : undefined),
  }
  if (!stored) {
    const block = protocolBlock(draft)
    // On create an empty secret is sent, for the API to name the field it needs.
    if (block.oidc) (block.oidc as Record<string, unknown>).clientSecret = draft.clientSecret
    return { ...body, type: draft.type, enabled: draft.enabled, ...block }
  }
  const top = changed(body, bodyOf(stored)) ?? {}
  const [key, block] = Object.entries(protocolBlock(draft))[0] as [string, Record<string, unknown>]
  const before = (protocolBlock(stored)[key] ?? {}) as Record<string, unknown>
  // Pasted metadata replaces the three fields whole; otherwise only the fields that changed.
  const diff = block.idpMetadataXml !== undefined ? block : changed(block, before)
  return diff ? { ...top, [key]: diff } : top
}

export function SsoConnectionForm(props: FormProps<Connection>) {
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, FIELDS, { domain_taken: 'domains' })
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft({ ...draft, [key]: value })
  const submit = submitted(() => props.onSubmit(bodyOf(draft, initial && draftOf(initial))))
  const id = initial ? `sso-${initial.id}` : 'new-sso'

  /** A text field (or textarea) with its label, hint and the API's messages. */
  const field = (
    key: keyof Draft & string,
    path: string,
    label: string,
    options: { hint?: string; rows?: number; type?: string; mono?: boolean; rename?: string } = {},
  ) => {
    const messages = errors.of(path).map((m) =>
      // A certificate's message names it, not a line (the text holds several lines each).
      REQUIRED.test(m) ? 'Required.' : options.rename ? m.replace(/^Line/, options.rename) : m,
    )
    return (
      <TextField
        id={`${id}-${key}`}
        label={label}
        hint={options.hint}
        rows={options.rows}
        type={options.rows ? undefined : (options.type ?? 'text')}
        spellCheck={false}
        className={options.mono ? 'mono' : undefined}
        value={draft[key] as string}
        onChange={(value) => set(key, value as never)}
        messages={messages}
      />
    )
  }

  const check = (
    key: 'enabled' | 'jitProvisioning' | 'enforce' | 'mfaSatisfied',
    label: string,
  ) => (
    <Check
      id={`${id}-${key}`}
      checked={draft[key]}
      onChange={(checked) => set(key, checked)}
      label={label}
    />
  )

  return (
    <form className="settings sso-form" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      {field('name', 'name', 'Name', { hint: 'Shown to people signing in, e.g. "Okta".' })}
      {!initial && (
        <fieldset className="choice">
          <legend>Protocol</legend>
          {TYPES.map(([value, label]) => (
            <Check
              key={value}
              id={`${id}-type-${value}`}
              name={`${id}-type`}
              checked={draft.type === value}
              onChange={() => set('type', value)}
              label={label}
            />
          ))}
        </fieldset>
      )}
      {draft.type === 'oidc' ? (
        <fieldset className="protocol">
          <legend>OpenID Connect identity provider</legend>
          {field('issuer', 'oidc.issuer', 'Issuer URL', {
            type: 'url',
            hint: 'The IdP’s issuer, e.g. https://example.okta.com (its discovery document is read from there).',
          })}
          {field('clientId', 'oidc.clientId', 'Client ID')}
          {field('clientSecret', 'oidc.clientSecret', 'Client secret', {
            type: 'password',
            hint: initial?.hasClientSecret
              ? 'A secret is stored. Leave this empty to keep it, or type a new one.'
              : 'Stored sealed; never shown again.',
          })}
          {field('scopes', 'oidc.scopes', 'Scopes', {
            hint: 'Separated by spaces; openid is always asked.',
          })}
        </fieldset>
      ) : (
        <fieldset className="protocol">
          <legend>SAML 2.0 identity provider</legend>
          <Check
            id={`${id}-from-metadata`}
            name={`${id}-from`}
            checked={draft.samlFrom === 'metadata'}
            onChange={() => set('samlFrom', 'metadata')}
            label={initial ? 'Replace from new IdP metadata XML' : 'Paste the IdP’s metadata XML'}
          />
          <Check
            id={`${id}-from-fields`}
            name={`${id}-from`}
            checked={draft.samlFrom === 'fields'}
            onChange={() => set('samlFrom', 'fields')}
            label="Entity ID, sign-in URL and certificates"
          />
          {draft.samlFrom === 'metadata' ? (
            field('idpMetadataXml', 'saml.idpMetadataXml', 'IdP metadata XML', {
              rows: 8,
              mono: true,
              hint: 'The whole <EntityDescriptor> document your IdP offers for download.',
            })
          ) : (
            <>
              {field('idpEntityId', 'saml.idpEntityId', 'IdP entity ID')}
              {field('idpSsoUrl', 'saml.idpSsoUrl', 'IdP sign-in URL', {
                type: 'url',
                hint: 'Its SingleSignOnService for the HTTP-Redirect binding.',
              })}
              {field('idpCertificates', 'saml.idpCertificates', 'IdP signing certificates', {
                rows: 8,
                mono: true,
                rename: 'Certificate',
                hint: 'One or more PEM blocks (-----BEGIN CERTIFICATE----- …), one after another.',
              })}
            </>
          )}
        </fieldset>
      )}
      {field('domains', 'domains', 'Email domains', {
        rows: 3,
        hint: 'One a line, e.g. example.com. People with these addresses sign in here; a domain belongs to one connection.',
      })}
      <fieldset className="switches">
        <legend>Sign-in</legend>
        {!initial && check('enabled', 'Enabled: people can sign in with it from now on')}
        {check('jitProvisioning', 'Create accounts on first sign-in (just-in-time provisioning)')}
        <div className="inline-field">
          <label htmlFor={`${id}-defaultRole`}>Role of new accounts</label>
          <select
            id={`${id}-defaultRole`}
            value={draft.defaultRole}
            onChange={(e) => set('defaultRole', e.target.value as Role)}
          >
            <option value="Member">Member</option>
            <option value="Admin">Admin</option>
          </select>
        </div>
        {check(
          'enforce',
          'Enforce: these domains must sign in here (no passwords or codes; Admins excepted)',
        )}
        {check('mfaSatisfied', 'The IdP’s sign-in satisfies the workspace’s MFA policy')}
      </fieldset>
      <OrganizationPicker
        id={`${id}-organizationId`}
        value={draft.organizationId}
        onChange={(value) => set('organizationId', value)}
        messages={errors.of('organizationId')}
      />
      {field('roleMapping', 'roleMapping', 'Role mapping', {
        rows: 3,
        mono: true,
        hint: 'One rule a line: claim=value: Role, Role (e.g. groups=engineering: Engineers). At each sign-in the roles these give replace those they gave before; roles given in Users stay.',
      })}
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}

/**
 * The organization a connection's sign-ins join (CONTRACT §18): none, or one of the
 * workspace's, listed page by page (GET organizations, which needs organizations:write;
 * without it the list says why and the stored choice stays as it is).
 */
function OrganizationPicker(props: {
  id: string
  value: string
  onChange(value: string): void
  messages: string[]
}) {
  const { session } = useConsole()
  const { id, value, messages } = props
  const list = usePages<Schemas['Organization']>(['organizations', 'picker'], (cursor) =>
    session.api.listOrganizations({ query: { limit: 200, cursor } }),
  )
  const known = list.items.some((o) => o.id === value)
  const hintId = `${id}-hint`
  return (
    <>
      <label htmlFor={id}>Organization</label>
      <p className="hint" id={hintId}>
        People who sign in here become members of it, with its JIT roles (a member already keeps
        their roles).
      </p>
      <select
        id={id}
        value={value}
        onChange={(e) => props.onChange(e.target.value)}
        {...described(`${id}-error`, messages, hintId)}
      >
        <option value="">None</option>
        {list.items.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
        {value && !known && <option value={value}>{list.loading ? 'Loading…' : value}</option>}
      </select>
      <FieldError id={`${id}-error`} messages={messages} />
      <ErrorText error={list.error} />
      {list.hasMore && (
        <button type="button" onClick={() => list.more()} disabled={list.loadingMore}>
          More organizations
        </button>
      )}
    </>
  )
}
