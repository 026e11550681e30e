// A saml application (CONTRACT §22, the tenant as a SAML identity provider): the values to
// give the service provider (the IdP's entity id, SSO URL, metadata URL, signing certificate
// and the IdP-initiated link), and the SP's fields for creating and editing it: its metadata
// (which fills the rest) or its entity id and ACS URLs, the NameID format, the attributes
// (one `Name = field` a line), its request-signing certificates and signResponse.
import { useQuery } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import type { Schemas } from './api.ts'
import { Check, type FormProps, fieldsOf, SubmitButton, submitted, TextField } from './fields.tsx'
import { CopyableFact, CopyButton, ErrorText, formErrors } from './ui.tsx'

type Application = Schemas['Application']
type Saml = NonNullable<Application['saml']>

const NAMEID_FORMATS: [Saml['nameIdFormat'], string][] = [
  ['emailAddress', 'Email address'],
  ['persistent', 'Persistent: an opaque id per user for this application'],
  ['unspecified', 'Unspecified: the user id'],
]
const SOURCES = ['email', 'givenName', 'familyName', 'displayName', 'roles', 'id']
const FIELDS = [
  'name',
  'entityId',
  'acsUrls',
  'nameIdFormat',
  'attributes',
  'spCertificates',
  'spMetadataXml',
  'signResponse',
]

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)

/** `Name = field` lines as the API's attributes; a line without `=` names itself. */
function attributesOf(text: string) {
  return lines(text).map((line) => {
    const at = line.lastIndexOf('=')
    return at < 0
      ? { name: line, from: line }
      : { name: line.slice(0, at).trim(), from: line.slice(at + 1).trim() }
  })
}

/** The PEM blocks of a text, each whole. */
function pemsOf(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []
}

interface Draft {
  name: string
  entityId: string
  acsUrls: string
  nameIdFormat: Saml['nameIdFormat']
  attributes: string
  spCertificates: string
  spMetadataXml: string
  signResponse: boolean
}

function draftOf(app?: Application): Draft {
  const saml = app?.saml
  return {
    name: app?.name ?? '',
    entityId: saml?.entityId ?? '',
    acsUrls: saml?.acsUrls.join('\n') ?? '',
    nameIdFormat: saml?.nameIdFormat ?? 'emailAddress',
    attributes: saml?.attributes.map((a) => `${a.name} = ${a.from}`).join('\n') ?? '',
    spCertificates: saml?.spCertificates.join('\n') ?? '',
    spMetadataXml: '',
    signResponse: saml?.signResponse ?? false,
  }
}

/** The body: with metadata, what the fields leave empty comes from it. */
function bodyOf(draft: Draft, editing: boolean): Record<string, unknown> {
  const metadata = draft.spMetadataXml.trim()
  const body: Record<string, unknown> = {
    name: draft.name,
    ...(editing ? {} : { type: 'saml' }),
    nameIdFormat: draft.nameIdFormat,
    attributes: attributesOf(draft.attributes),
    signResponse: draft.signResponse,
  }
  if (metadata) body.spMetadataXml = metadata
  if (draft.entityId.trim() || !metadata) body.entityId = draft.entityId.trim() || undefined
  if (lines(draft.acsUrls).length > 0 || !metadata) body.acsUrls = lines(draft.acsUrls)
  const pems = pemsOf(draft.spCertificates)
  if (pems.length > 0 || editing || draft.spCertificates.trim()) {
    body.spCertificates = pems.length > 0 ? pems : lines(draft.spCertificates)
  }
  return body
}

export function SamlForm(props: FormProps<Application> & { typeSelect?: ReactNode }) {
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, FIELDS)
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft({ ...draft, [key]: value })
  const id = initial ? `saml-${initial.id}` : 'new-saml'
  const submit = submitted(() => props.onSubmit(bodyOf(draft, initial !== undefined)))
  const text = fieldsOf(id, draft, set, errors)
  return (
    <form className="settings" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      <TextField label="Name" required maxLength={200} {...text('name')} />
      {props.typeSelect}
      <TextField
        label="Service provider metadata (optional)"
        hint="Paste the SP’s SAML metadata: it fills the entity id, ACS URLs and certificates left empty below."
        rows={4}
        {...text('spMetadataXml')}
      />
      <TextField label="SP entity ID" {...text('entityId')} />
      <TextField
        label="Assertion Consumer Service URLs"
        hint="One URL a line: https, or http on localhost. The first is used when the SP names none."
        rows={2}
        {...text('acsUrls')}
      />
      <label htmlFor={`${id}-nameid`}>NameID format</label>
      <select
        id={`${id}-nameid`}
        value={draft.nameIdFormat}
        onChange={(e) => set('nameIdFormat', e.target.value as Saml['nameIdFormat'])}
      >
        {NAMEID_FORMATS.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <TextField
        label="Attributes"
        hint={`One “Name = field” a line; fields: ${SOURCES.join(', ')}.`}
        rows={3}
        {...text('attributes')}
      />
      <TextField
        label="SP signing certificates (PEM, optional)"
        hint="When set, the SP’s sign-in requests must be signed by one of them."
        rows={3}
        {...text('spCertificates')}
      />
      <Check
        id={`${id}-sign-response`}
        checked={draft.signResponse}
        onChange={(checked) => set('signResponse', checked)}
        label="Sign the whole response too (the assertion always is)"
      />
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}

/** The IdP's signing certificates, read from the metadata the service publishes. */
function useIdpCertificates(tenant: string) {
  return useQuery({
    queryKey: ['saml-metadata', tenant],
    queryFn: async () => {
      const res = await fetch(`/saml/${encodeURIComponent(tenant)}/metadata`)
      if (!res.ok) throw new Error(`the IdP metadata answered ${res.status}`)
      const xml = new DOMParser().parseFromString(await res.text(), 'application/xml')
      const found = xml.getElementsByTagNameNS(
        'http://www.w3.org/2000/09/xmldsig#',
        'X509Certificate',
      )
      return Array.from(found, (node) => {
        const body = (node.textContent ?? '').replace(/\s+/g, '')
        return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----`
      })
    },
    staleTime: 60_000,
  })
}

/** What the SP's administrator needs: the IdP's values, then the SP as stored. */
export function SamlFacts({
  app,
  publicUrl,
  tenant,
}: {
  app: Application
  publicUrl: string
  tenant: string
}) {
  const certificates = useIdpCertificates(tenant)
  const saml = app.saml
  const idp: [string, string][] = [
    ['IdP entity ID', `${publicUrl}/saml/${tenant}/metadata`],
    ['SSO URL (Redirect and POST)', `${publicUrl}/saml/${tenant}/sso`],
    ['Metadata URL', `${publicUrl}/saml/${tenant}/metadata`],
    ['IdP-initiated sign-in link', `${publicUrl}/v1/${tenant}/saml-apps/${app.id}/start`],
  ]
  const certificate = certificates.data?.[0]
  return (
    <section aria-labelledby="saml-idp-h">
      <h2 id="saml-idp-h">Give these to the service provider</h2>
      <dl className="facts app-facts">
        {idp.map(([label, value]) => (
          <CopyableFact key={label} label={label} value={value} what={label.toLowerCase()} />
        ))}
        <dt>Signing certificate</dt>
        <dd>
          <ErrorText error={certificates.error} />
          {certificate && (
            <>
              {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region */}
              <pre className="pem" tabIndex={0}>
                <code>{certificate}</code>
              </pre>
              <CopyButton text={certificate} what="signing certificate" />
            </>
          )}
        </dd>
        {saml && (
          <>
            <dt>SP entity ID</dt>
            <dd>
              <code>{saml.entityId}</code>
            </dd>
            <dt>ACS URLs</dt>
            <dd>
              {saml.acsUrls.map((url) => (
                <code key={url} className="line">
                  {url}
                </code>
              ))}
            </dd>
            <dt>NameID</dt>
            <dd>
              {saml.nameIdFormat}
              {saml.spCertificates.length > 0 ? ' · signed requests required' : ''}
              {saml.signResponse ? ' · response signed' : ''}
            </dd>
          </>
        )}
      </dl>
    </section>
  )
}
