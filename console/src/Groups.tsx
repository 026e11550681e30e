// Groups (CONTRACT §17): the groups the workspace's directory provisioned through SCIM,
// page by page, each with its members' count and its custom roles, which every member holds
// while a member. The directory owns the groups (name, members); the console sets a group's
// roles ("Roles": a choice among the tenant's custom roles, PUT groups/{id}/roles), with
// roles:write. The API refuses a role the admin may not grant (403 permission_required),
// shown above the choice.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Fragment, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { useRoles } from './Roles.tsx'
import { ErrorText, formatDate, MoreButton, usePages } from './ui.tsx'

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
        <table className="cards">
          <caption className="visually-hidden">Groups</caption>
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">Members</th>
              <th scope="col">Custom roles</th>
              <th scope="col">Changed</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
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
                      <GroupRoles group={group} onDone={() => setOpen(null)} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
      {list.loading && <p>Loading…</p>}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}

/** The group's custom roles, ticked among the tenant's, saved together (the set is replaced). */
function GroupRoles({ group, onDone }: { group: Group; onDone(): void }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const roles = useRoles()
  const [chosen, setChosen] = useState<string[]>(group.roles)
  const custom = (roles.data ?? []).filter((r) => !r.builtIn && r.kind === 'tenant')
  const save = useMutation({
    mutationFn: () =>
      session.api.setGroupRoles({
        path: { id: group.id },
        body: { roles: custom.map((r) => r.name).filter((n) => chosen.includes(n)) },
      }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['groups'] })
      void queries.invalidateQueries({ queryKey: ['users'] })
      void queries.invalidateQueries({ queryKey: ['me'] })
      onDone()
    },
  })
  const id = `group-roles-${group.id}`
  return (
    <form
      className="sub user-roles"
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <ErrorText error={roles.error ?? save.error} />
      {roles.isSuccess && custom.length === 0 ? (
        <p>
          No custom roles yet: create one in <a href="#roles">Roles</a>.
        </p>
      ) : (
        <fieldset className="event-list">
          <legend>Custom roles of the group {group.displayName}</legend>
          {custom.map((role) => (
            <div className="check" key={role.id}>
              <input
                type="checkbox"
                id={`${id}-${role.id}`}
                checked={chosen.includes(role.name)}
                onChange={(e) =>
                  setChosen(
                    e.target.checked
                      ? [...chosen, role.name]
                      : chosen.filter((n) => n !== role.name),
                  )
                }
              />
              <label htmlFor={`${id}-${role.id}`}>{role.name}</label>
            </div>
          ))}
        </fieldset>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending || !roles.isSuccess}>
          Save roles
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  )
}
