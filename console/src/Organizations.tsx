// Organizations (CONTRACT §18): the tenant's organizations, listed page by page with their
// members' count and JIT domains, and a form to create one. #organizations?id=<id> opens
// one (Organization.tsx): its settings, members, invitations and deletion; a new one
// lands there.
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { OrganizationPage } from './Organization.tsx'
import { OrganizationForm } from './OrganizationForm.tsx'
import { useCreate } from './record.tsx'
import { ErrorText, formatDate, hashQuery, MoreButton, Table, usePages } from './ui.tsx'

type Organization = Schemas['Organization']

export function Organizations() {
  const id = hashQuery().get('id')
  return id ? <OrganizationPage id={id} /> : <OrganizationList />
}

function OrganizationList() {
  const { session } = useConsole()
  const list = usePages<Organization>(['organizations'], (cursor) =>
    session.api.listOrganizations({ query: { limit: 50, cursor } }),
  )
  const create = useCreate('organizations', async (body) => {
    const created = await session.api.createOrganization({ body: body as never })
    return { id: created.organization.id }
  })
  return (
    <>
      <p className="hint intro">
        The customers of your product, each with its members: one account in the workspace may
        belong to several organizations, with organization roles in each (made in Roles, of kind
        organization).
      </p>
      <ErrorText error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && (
        <p>No organizations yet: create the first one below.</p>
      )}
      {list.items.length > 0 && (
        <Table
          className="cards org-list"
          caption="Organizations"
          columns={['Name', 'Members', 'JIT domains', 'Second factor', 'Created']}
        >
          {list.items.map((o) => (
            <tr key={o.id}>
              <td data-label="Name" className="long">
                {/* One element: on a phone the cell is a grid of its label and its value. */}
                <span>
                  <a href={`#organizations?id=${encodeURIComponent(o.id)}`}>{o.name}</a>
                  {o.description && <span className="hint org-description"> {o.description}</span>}
                </span>
              </td>
              <td data-label="Members">{o.memberCount}</td>
              <td data-label="JIT domains" className="long domains">
                {o.jit.emailDomains.length ? o.jit.emailDomains.join(', ') : '—'}
              </td>
              <td data-label="Second factor">{o.mfaRequired ? 'Required' : 'No'}</td>
              <td data-label="Created">{formatDate(o.createdAt)}</td>
            </tr>
          ))}
        </Table>
      )}
      {list.loading && <p>Loading…</p>}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
      <section aria-labelledby="new-org-h">
        <h2 id="new-org-h">New organization</h2>
        <OrganizationForm submitLabel="Create organization" {...formOf(create)} />
      </section>
    </>
  )
}
