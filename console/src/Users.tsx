// Users: the tenant's users page by page, filtered by address among those loaded; for each,
// suspend or reactivate, change role, reset the authenticator, see and end their sessions,
// delete, or erase (personal data, at once: CONTRACT §9); and open the audit log filtered
// to the user, whose own events (a sign-out, say) name no address to search by. The
// signed-in admin's own row offers none of suspend, delete or erase: a slip there locks
// them out of the console they are using. A user's custom roles (CONTRACT §17) are listed
// in their row and changed there ("Roles": a choice among the tenant's custom roles, PUT
// users/{id}/roles). "Locked users only" lists the accounts the failure budgets locked
// (CONTRACT §21), each with Unlock. Changing a user needs users:write and their roles roles:write (the
// signed-in user's /me permissions): without it the row shows the value and not the control.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Fragment, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { CustomRolesForm } from './CustomRoles.tsx'
import { Check } from './fields.tsx'
import { ConfirmButton, ErrorText, formatDate, MoreButton, Table, usePages } from './ui.tsx'

type User = Schemas['User']

export function Users() {
  const { session } = useConsole()
  const queries = useQueryClient()
  const [filter, setFilter] = useState('')
  // CONTRACT §21: the users the failure budgets locked, from the service (users?locked=true).
  const [lockedOnly, setLockedOnly] = useState(false)
  const [open, setOpen] = useState<{ id: string; what: 'sessions' | 'roles' } | null>(null)
  const me = useQuery({ queryKey: ['me'], queryFn: () => session.api.getMe() })
  const may = (permission: string) =>
    (me.data?.permissions as readonly string[] | undefined)?.includes(permission) ?? false
  const toggle = (id: string, what: 'sessions' | 'roles') =>
    setOpen(open?.id === id && open.what === what ? null : { id, what })
  /** Until /me answers, any row may be the admin's own. */
  const mayBeOwn = (user: User) => me.data === undefined || user.id === me.data.id
  const list = usePages<User>(['users', lockedOnly], (cursor) =>
    session.api.listUsers({
      query: { limit: 50, cursor, ...(lockedOnly ? { locked: true } : {}) },
    }),
  )
  const change = useMutation({
    mutationFn: async (action: {
      user: User
      kind: 'patch' | 'totp' | 'unlock' | 'delete' | 'erase'
      patch?: object
    }) => {
      const path = { userId: action.user.id }
      if (action.kind === 'patch')
        await session.api.updateUser({ path, body: action.patch as never })
      if (action.kind === 'totp') await session.api.disableUserTotp({ path })
      if (action.kind === 'unlock') await session.api.unlockUser({ path })
      if (action.kind === 'delete') await session.api.deleteUser({ path })
      if (action.kind === 'erase') await session.api.eraseUser({ path })
    },
    onSuccess: () => queries.invalidateQueries({ queryKey: ['users'] }),
  })
  const needle = filter.trim().toLowerCase()
  const shown = needle
    ? list.items.filter((u) => u.email.toLowerCase().includes(needle))
    : list.items
  return (
    <>
      <div className="toolbar">
        <label htmlFor="user-filter">Search by email</label>
        <input
          id="user-filter"
          type="search"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          placeholder="name@example.com"
        />
        <Check
          id="locked-only"
          checked={lockedOnly}
          onChange={setLockedOnly}
          label="Locked users only"
        />
      </div>
      <ErrorText error={list.error ?? change.error} />
      <Table
        className="cards"
        caption="Users"
        columns={[
          'Email',
          'Role',
          'Custom roles',
          'Status',
          'Authenticator',
          'Last sign-in',
          'Actions',
        ]}
      >
        {shown.map((user) => (
          <Fragment key={user.id}>
            <tr>
              <td data-label="Email" className="long">
                {user.email}
              </td>
              <td data-label="Role">
                {may('users:write') ? (
                  <>
                    <label className="visually-hidden" htmlFor={`role-${user.id}`}>
                      Role of {user.email}
                    </label>
                    <select
                      id={`role-${user.id}`}
                      value={user.role}
                      onChange={(e) =>
                        change.mutate({ user, kind: 'patch', patch: { role: e.target.value } })
                      }
                    >
                      <option>Member</option>
                      <option>Admin</option>
                    </select>
                  </>
                ) : (
                  user.role
                )}
              </td>
              <td data-label="Custom roles" className="long">
                {user.roles.length ? user.roles.join(', ') : '—'}
              </td>
              <td data-label="Status">
                {user.status}
                {user.lockedUntil && <> (locked until {formatDate(user.lockedUntil)})</>}
              </td>
              <td data-label="Authenticator">{user.totpEnrolled ? 'Yes' : 'No'}</td>
              <td data-label="Last sign-in">{formatDate(user.lastLoginAt)}</td>
              <td className="actions">
                {mayBeOwn(user) || !may('users:write') ? null : user.status === 'Suspended' ? (
                  <button
                    type="button"
                    onClick={() =>
                      change.mutate({ user, kind: 'patch', patch: { status: 'Active' } })
                    }
                  >
                    Reactivate
                  </button>
                ) : (
                  <button
                    type="button"
                    onClick={() =>
                      change.mutate({ user, kind: 'patch', patch: { status: 'Suspended' } })
                    }
                  >
                    Suspend
                  </button>
                )}
                {user.lockedUntil && may('users:write') && (
                  <button type="button" onClick={() => change.mutate({ user, kind: 'unlock' })}>
                    Unlock<span className="visually-hidden"> {user.email}</span>
                  </button>
                )}
                {user.totpEnrolled && may('users:write') && (
                  <ConfirmButton
                    label="Reset authenticator"
                    confirm="Remove their authenticator?"
                    onConfirm={() => change.mutate({ user, kind: 'totp' })}
                  />
                )}
                {may('roles:write') && (
                  <button
                    type="button"
                    aria-expanded={open?.id === user.id && open.what === 'roles'}
                    onClick={() => toggle(user.id, 'roles')}
                  >
                    Roles<span className="visually-hidden"> of {user.email}</span>
                  </button>
                )}
                <button
                  type="button"
                  aria-expanded={open?.id === user.id && open.what === 'sessions'}
                  onClick={() => toggle(user.id, 'sessions')}
                >
                  Sessions
                </button>
                <a href={`#audit?user=${encodeURIComponent(user.id)}`}>
                  Audit events<span className="visually-hidden"> of {user.email}</span>
                </a>
                {!mayBeOwn(user) && may('users:write') && (
                  <>
                    <ConfirmButton
                      label="Delete"
                      danger
                      confirm={`Delete ${user.email}?`}
                      onConfirm={() => change.mutate({ user, kind: 'delete' })}
                    />
                    <ConfirmButton
                      label="Erase data"
                      danger
                      confirm={`Erase ${user.email} and their data now?`}
                      onConfirm={() => change.mutate({ user, kind: 'erase' })}
                    />
                  </>
                )}
              </td>
            </tr>
            {open?.id === user.id && (
              <tr>
                <td colSpan={7} className="whole">
                  {open.what === 'sessions' ? (
                    <UserSessions userId={user.id} mayEnd={may('users:write')} />
                  ) : (
                    <CustomRolesForm
                      id={`user-roles-${user.id}`}
                      legend={`Custom roles of ${user.email}`}
                      held={user.roles}
                      offered={(r) => !r.builtIn}
                      save={(roles) =>
                        session.api.setUserRoles({ path: { userId: user.id }, body: { roles } })
                      }
                      touches={[['users'], ['me']]}
                      onDone={() => setOpen(null)}
                    />
                  )}
                </td>
              </tr>
            )}
          </Fragment>
        ))}
      </Table>
      {list.loading && <p>Loading…</p>}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}

/** A user's live sessions, each of which the admin can end (with users:write). */
function UserSessions({ userId, mayEnd }: { userId: string; mayEnd: boolean }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const key = ['user-sessions', userId]
  const list = useQuery({
    queryKey: key,
    queryFn: () => session.api.listUserSessions({ path: { userId }, query: { limit: 100 } }),
  })
  const end = useMutation({
    mutationFn: (id: string) => session.api.endUserSession({ path: { userId, id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: key }),
  })
  const items = list.data?.items ?? []
  return (
    <div className="sub">
      <ErrorText error={list.error ?? end.error} />
      {list.isSuccess && items.length === 0 && <p>No live sessions.</p>}
      <ul className="sessions">
        {items.map((s) => (
          <li key={s.id}>
            <span>
              {s.userAgent ?? 'Unknown browser'} · {s.ip ?? 'unknown address'} · last active{' '}
              {formatDate(s.lastUsedAt)}
            </span>
            {mayEnd && (
              <button type="button" onClick={() => end.mutate(s.id)}>
                End session
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}
