// Applications (CONTRACT §11): the tenant's OpenID Connect clients, listed page by page,
// and a form to create one. #applications?id=<id> opens one application (Application.tsx);
// a new one opens there with its secret, handed over in memory so that it is shown once.
import { ApplicationPage } from './Application.tsx'
import { ApplicationForm, TYPES } from './ApplicationForm.tsx'
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { useCreate } from './record.tsx'
import { ErrorText, formatDate, hashQuery, MoreButton, Table, usePages } from './ui.tsx'

type Application = Schemas['Application']

export function Applications() {
  const id = hashQuery().get('id')
  return id ? <ApplicationPage id={id} /> : <ApplicationList />
}

const typeName = (type: Application['type']) =>
  TYPES.find(([value]) => value === type)?.[1].split(':')[0] ?? type

function ApplicationList() {
  const { session } = useConsole()
  const list = usePages<Application>(['applications'], (cursor) =>
    session.api.listApplications({ query: { limit: 50, cursor } }),
  )
  const create = useCreate('applications', async (body) => {
    const created = await session.api.createApplication({ body: body as never })
    return { id: created.application.id, secret: created.clientSecret }
  })
  return (
    <>
      <ErrorText error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && (
        <p>No applications yet: create the first one below.</p>
      )}
      {list.items.length > 0 && (
        <Table
          caption="Applications"
          columns={['Name', 'Type', 'Client ID or entity ID', 'Created']}
        >
          {list.items.map((app) => (
            <tr key={app.id}>
              <td>
                <a href={`#applications?id=${encodeURIComponent(app.id)}`}>{app.name}</a>
              </td>
              <td>{typeName(app.type)}</td>
              <td>
                <code>{app.type === 'saml' ? app.saml?.entityId : app.clientId}</code>
              </td>
              <td>{formatDate(app.createdAt)}</td>
            </tr>
          ))}
        </Table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
      <section aria-labelledby="new-app-h">
        <h2 id="new-app-h">New application</h2>
        <ApplicationForm submitLabel="Create application" {...formOf(create)} />
      </section>
    </>
  )
}
