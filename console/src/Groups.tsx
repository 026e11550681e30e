// Groups (CONTRACT §17): the groups the workspace's directory provisioned through SCIM,
// page by page, each with its members' count and its custom roles, which every member holds
// while a member. The directory owns the groups (name, members); the console sets a group's
// roles ("Roles": a choice among the tenant's custom roles, PUT groups/{id}/roles), with
// roles:write. The API refuses a role the admin may not grant (403 permission_required),
// shown above the choice.
import { useQuery } from '@tanstack/react-query'
import { Fragment, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { CustomRolesForm } from './CustomRoles.tsx'
import { ErrorText, formatDate, MoreButton, Table, usePages } from './ui.tsx'

type Group = Schemas['Group']

export function Groups() {
  const { session, tenant } = useConsole()
  const [open, setOpen] = useState<string | null>(null)
  const me = useQuery({ queryKey: ['me'], queryFn: () => session.api.getMe() })
  const mayGrant = (me.data?.permissions as readonly string[] | undefined)?.includes('roles:write')
  const list = usePages<Group>(['groups'], (cursor) =>
    session.api.listGroups({ query: { limit: 50, cursor } }),
  )
  return (
    <>
      <p className="hint intro">
        The groups your directory provisions through SCIM (at <code>/scim/v2/{tenant}/Groups</code>
        ). Every member of a group holds the group's custom roles while a member; the directory
        decides who the members are.
      </p>
      <ErrorText error={list.error} />
      {!list.loading && list.items.length === 0 && !list.error && (
        <p>No groups yet: your directory creates them when it provisions groups.</p>
      )}
      {list.items.length > 0 && (
        <Table
          className="cards"
          caption="Groups"
          columns={['Group', 'Members', 'Custom roles', 'Changed', 'Actions']}
        >
          {list.items.map((group) => (
            <Fragment key={group.id}>
              <tr>
                <td data-label="Group" className="long">
                  {/* One element: on a phone the cell is a label-value grid. */}
                  <span>
                    {group.displayName}
                    {group.externalId && <span className="hint"> ({group.externalId})</span>}
                  </span>
                </td>
                <td data-label="Members">{group.memberCount}</td>
                <td data-label="Custom roles" className="long">
                  {group.roles.length ? group.roles.join(', ') : '—'}
                </td>
                <td data-label="Changed">{formatDate(group.updatedAt)}</td>
                <td className="actions">
                  {mayGrant && (
                    <button
                      type="button"
                      aria-expanded={open === group.id}
                      onClick={() => setOpen(open === group.id ? null : group.id)}
                    >
                      Roles<span className="visually-hidden"> of {group.displayName}</span>
                    </button>
                  )}
                </td>
              </tr>
              {open === group.id && (
                <tr>
                  <td colSpan={5} className="whole">
                    <CustomRolesForm
                      id={`group-roles-${group.id}`}
                      legend={`Custom roles of the group ${group.displayName}`}
                      held={group.roles}
                      offered={(r) => !r.builtIn && r.kind === 'tenant'}
                      save={(roles) =>
                        session.api.setGroupRoles({ path: { id: group.id }, body: { roles } })
                      }
                      touches={[['groups'], ['users'], ['me']]}
                      onDone={() => setOpen(null)}
                    />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </Table>
      )}
      {list.loading && <p>Loading…</p>}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}
