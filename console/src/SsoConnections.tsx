// SSO (CONTRACT §12): the workspace's enterprise sign-in connections, OIDC or SAML, listed
// page by page with the domains each owns and its switches, and a form to add one.
// #sso?id=<id> opens one connection (SsoConnection.tsx), where a new one lands to show
// what to register at the identity provider.
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { useCreate } from './record.tsx'
import { SsoConnectionPage } from './SsoConnection.tsx'
import { SsoConnectionForm, typeName } from './SsoConnectionForm.tsx'
import { ErrorText, hashQuery, MoreButton, Table, usePages } from './ui.tsx'

type Connection = Schemas['SsoConnection']

export function SsoConnections() {
  const id = hashQuery().get('id')
  return id ? <SsoConnectionPage id={id} /> : <ConnectionList />
}

const yesNo = (on: boolean) => (on ? 'Yes' : 'No')

function ConnectionList() {
  const { session } = useConsole()
  const list = usePages<Connection>(['sso'], (cursor) =>
    session.api.listSsoConnections({ query: { limit: 50, cursor } }),
  )
  const create = useCreate('sso', async (body) => {
    const created = await session.api.createSsoConnection({ body: body as never })
    return { id: created.connection.id }
  })
  return (
    <>
      <p className="hint intro">
        Let people of an organisation sign in through its own identity provider (Okta, Entra ID,
        Google Workspace, …) over OpenID Connect or SAML 2.0, chosen by the domain of their email
        address.
      </p>
      <ErrorText error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && (
        <p>No SSO connections yet: add the first one below.</p>
      )}
      {list.items.length > 0 && (
        <Table
          className="sso-list"
          caption="SSO connections"
          columns={['Name', 'Type', 'Domains', 'Enabled', 'Enforced']}
        >
          {list.items.map((c) => (
            <tr key={c.id}>
              <td data-label="Name">
                <a href={`#sso?id=${encodeURIComponent(c.id)}`}>{c.name}</a>
              </td>
              <td data-label="Type">{typeName(c.type)}</td>
              <td data-label="Domains" className="domains">
                {c.domains.join(', ')}
              </td>
              <td data-label="Enabled">{yesNo(c.enabled)}</td>
              <td data-label="Enforced">{yesNo(c.enforce)}</td>
            </tr>
          ))}
        </Table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
      <section aria-labelledby="new-sso-h">
        <h2 id="new-sso-h">New connection</h2>
        <SsoConnectionForm submitLabel="Create connection" {...formOf(create)} />
      </section>
    </>
  )
}
