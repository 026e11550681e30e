// One SSO connection (CONTRACT §12): what to register at the identity provider (the OIDC
// redirect URI; the SAML entity ID, ACS URL and metadata URL), each with a copy button; a
// test sign-in in a new tab (the hosted page `/t/{slug}/sso/{id}` that starts a sign-in
// naming the connection); enable and disable; deletion; and its settings.
import { useQuery } from '@tanstack/react-query'
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import {
  DeleteButton,
  EnableButton,
  SettingsSection,
  TestConnectionLink,
  useRecord,
} from './record.tsx'
import { SsoConnectionForm, typeName } from './SsoConnectionForm.tsx'
import { CopyableFact, ErrorText, formatDate } from './ui.tsx'

type Connection = Schemas['SsoConnection']

export function SsoConnectionPage({ id }: { id: string }) {
  const { session, tenant } = useConsole()
  const { record, update, toggle, remove, saves } = useRecord<Connection>({
    area: 'sso',
    id,
    read: async () => (await session.api.getSsoConnection({ path: { id } })).connection,
    update: async (body) =>
      (await session.api.updateSsoConnection({ path: { id }, body: body as never })).connection,
    remove: () => session.api.deleteSsoConnection({ path: { id } }),
    dropList: true,
  })
  const c = record.data
  return (
    <>
      <p>
        <a href="#sso">All connections</a>
      </p>
      <ErrorText error={record.error ?? toggle.error ?? remove.error} />
      {c && (
        <>
          <h2 className="hook-url">{c.name}</h2>
          <dl className="facts app-facts">
            <dt>Type</dt>
            <dd>{typeName(c.type)}</dd>
            <dt>Domains</dt>
            <dd className="domains">{c.domains.join(', ')}</dd>
            <dt>State</dt>
            <dd>
              {c.enabled ? 'Enabled' : 'Disabled'}
              {c.enforce ? ' · enforced' : ''}
            </dd>
            <dt>Organization</dt>
            <dd>
              <OrganizationName id={c.organizationId} />
            </dd>
            <dt>Created</dt>
            <dd>{formatDate(c.createdAt)}</dd>
          </dl>
          <div className="row">
            <EnableButton enabled={c.enabled} toggle={toggle} />
            {c.enabled && (
              <TestConnectionLink
                href={`/t/${encodeURIComponent(tenant)}/sso/${encodeURIComponent(c.id)}`}
              />
            )}
            <DeleteButton
              label="Delete connection"
              confirm={`Delete ${c.name}? Its people sign in some other way after.`}
              remove={remove}
            />
          </div>
          <p className="hint">
            {c.enabled
              ? 'Test this connection opens its sign-in in a new tab, as your people will go through it.'
              : 'A disabled connection signs nobody in: enable it to test it.'}
          </p>
          <Register connection={c} />
          <SettingsSection id="sso-settings-h" saved={update.isSuccess}>
            <SsoConnectionForm
              key={`${c.updatedAt}:${saves}`}
              initial={c}
              submitLabel="Save connection"
              {...formOf(update)}
            />
          </SettingsSection>
        </>
      )}
    </>
  )
}

/** What the IdP's administrator registers there, each to copy. */
function Register({ connection: c }: { connection: Connection }) {
  const copyable: [string, string][] = c.oidc
    ? [['Redirect URI', c.oidc.redirectUri]]
    : c.saml
      ? [
          ['SP entity ID', c.saml.spEntityId],
          ['ACS URL', c.saml.acsUrl],
          ['SP metadata URL', c.saml.metadataUrl],
        ]
      : []
  return (
    <section aria-labelledby="sso-register-h">
      <h2 id="sso-register-h">Register at your identity provider</h2>
      <p className="hint">
        {c.oidc
          ? 'Create an OpenID Connect web application there with this redirect URI, then enter its client ID and secret below.'
          : 'Create a SAML application there with these values, or give it the metadata URL. It must sign its responses or assertions (SHA-256) and send the email address as the NameID or an email attribute.'}
      </p>
      <dl className="facts app-facts">
        {copyable.map(([label, value]) => (
          <CopyableFact key={label} label={label} value={value} />
        ))}
      </dl>
    </section>
  )
}

/** The organization its sign-ins join (CONTRACT §18), linked to its page; its id until read. */
function OrganizationName({ id }: { id: string | null }) {
  const { session } = useConsole()
  const organization = useQuery({
    queryKey: ['organizations', id],
    queryFn: async () =>
      (await session.api.getOrganization({ path: { id: id ?? '' } })).organization,
    enabled: id !== null,
  })
  if (!id) return <>None</>
  return <a href={`#organizations?id=${encodeURIComponent(id)}`}>{organization.data?.name ?? id}</a>
}
