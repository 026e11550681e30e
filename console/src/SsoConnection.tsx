// One SSO connection (CONTRACT §12): what to register at the identity provider (the OIDC
// redirect URI; the SAML entity ID, ACS URL and metadata URL), each with a copy button; a
// test sign-in in a new tab (the hosted page `/t/{slug}/sso/{id}` that starts a sign-in
// naming the connection); enable and disable; deletion; and its settings.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Fragment, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { SsoConnectionForm, typeName } from './SsoConnectionForm.tsx'
import { ConfirmButton, CopyButton, ErrorText, formatDate } from './ui.tsx'

type Connection = Schemas['SsoConnection']

export function SsoConnectionPage({ id }: { id: string }) {
  const { session, tenant } = useConsole()
  const queries = useQueryClient()
  const key = ['sso', id]
  const connection = useQuery({
    queryKey: key,
    queryFn: async () => (await session.api.getSsoConnection({ path: { id } })).connection,
  })
  const saved = (updated: { connection: Connection }) => {
    queries.setQueryData(key, updated.connection)
    void queries.invalidateQueries({ queryKey: ['sso'], exact: true })
  }
  // Each save starts the form afresh from the record answered (a typed secret is cleared),
  // even when two saves share one updatedAt.
  const [saves, setSaves] = useState(0)
  const update = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      session.api.updateSsoConnection({ path: { id }, body: body as never }),
    onSuccess: (updated) => {
      saved(updated)
      setSaves((n) => n + 1)
    },
  })
  const toggle = useMutation({
    mutationFn: (enabled: boolean) =>
      session.api.updateSsoConnection({ path: { id }, body: { enabled } }),
    onSuccess: saved,
  })
  const remove = useMutation({
    mutationFn: () => session.api.deleteSsoConnection({ path: { id } }),
    onSuccess: () => {
      // The list loads afresh rather than show the deleted connection for a moment.
      queries.removeQueries({ queryKey: key })
      queries.removeQueries({ queryKey: ['sso'], exact: true })
      window.location.hash = '#sso'
    },
  })
  const c = connection.data
  return (
    <>
      <p>
        <a href="#sso">All connections</a>
      </p>
      <ErrorText error={connection.error ?? toggle.error ?? remove.error} />
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
            <button
              type="button"
              disabled={toggle.isPending}
              onClick={() => toggle.mutate(!c.enabled)}
            >
              {c.enabled ? 'Disable' : 'Enable'}
            </button>
            {c.enabled && (
              <a
                className="button-link"
                href={`/t/${encodeURIComponent(tenant)}/sso/${encodeURIComponent(c.id)}`}
                target="_blank"
                rel="noopener noreferrer"
              >
                Test this connection
                <span className="visually-hidden"> (opens a new tab)</span>
              </a>
            )}
            <ConfirmButton
              label="Delete connection"
              danger
              confirm={`Delete ${c.name}? Its people sign in some other way after.`}
              onConfirm={() => remove.mutate()}
            />
          </div>
          <p className="hint">
            {c.enabled
              ? 'Test this connection opens its sign-in in a new tab, as your people will go through it.'
              : 'A disabled connection signs nobody in: enable it to test it.'}
          </p>
          <Register connection={c} />
          <section aria-labelledby="sso-settings-h">
            <h2 id="sso-settings-h">Settings</h2>
            <SsoConnectionForm
              key={`${c.updatedAt}:${saves}`}
              initial={c}
              submitLabel="Save connection"
              pending={update.isPending}
              error={update.error}
              onSubmit={(body) => update.mutate(body)}
            />
            {update.isSuccess && <p role="status">Saved.</p>}
          </section>
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
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd className="copyable">
              <code>{value}</code>
              <CopyButton text={value} what={label} />
            </dd>
          </Fragment>
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
