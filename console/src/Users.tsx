// Users: the tenant's users page by page, filtered by address among those loaded; for each,
// suspend or reactivate, change role, reset the authenticator, see and end their sessions,
// delete, or erase (personal data, at once: CONTRACT §9); and open the audit log filtered
// to the user, whose own events (a sign-out, say) name no address to search by. The
// signed-in admin's own row offers none of suspend, delete or erase: a slip there locks
// them out of the console they are using.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Fragment, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { ConfirmButton, ErrorText, formatDate, MoreButton, usePages } from './ui.tsx'

type User = Schemas['User']

export function Users() {
  const { session } = useConsole()
  const queries = useQueryClient()
  const [filter, setFilter] = useState('')
  const [open, setOpen] = useState<string | null>(null)
  const me = useQuery({ queryKey: ['me'], queryFn: () => session.api.getMe() })
  /** Until /me answers, any row may be the admin's own. */
  const mayBeOwn = (user: User) => me.data === undefined || user.id === me.data.id
  const list = usePages<User>(['users'], (cursor) =>
    session.api.listUsers({ query: { limit: 50, cursor } }),
  )
  const change = useMutation({
    mutationFn: async (action: {
      user: User
      kind: 'patch' | 'totp' | 'delete' | 'erase'
      patch?: object
    }) => {
      const path = { userId: action.user.id }
      if (action.kind === 'patch')
        await session.api.updateUser({ path, body: action.patch as never })
      if (action.kind === 'totp') await session.api.disableUserTotp({ path })
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
      </div>
      <ErrorText error={list.error ?? change.error} />
      <table className="cards">
        <caption className="visually-hidden">Users</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Authenticator</th>
            <th scope="col">Last sign-in</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((user) => (
            <Fragment key={user.id}>
              <tr>
                <td data-label="Email" className="long">
                  {user.email}
                </td>
                <td data-label="Role">
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
                </td>
                <td data-label="Status">{user.status}</td>
                <td data-label="Authenticator">{user.totpEnrolled ? 'Yes' : 'No'}</td>
                <td data-label="Last sign-in">{formatDate(user.lastLoginAt)}</td>
                <td className="actions">
                  {mayBeOwn(user) ? null : user.status === 'Suspended' ? (
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
                  {user.totpEnrolled && (
                    <ConfirmButton
                      label="Reset authenticator"
                      confirm="Remove their authenticator?"
                      onConfirm={() => change.mutate({ user, kind: 'totp' })}
                    />
                  )}
                  <button
                    type="button"
                    aria-expanded={open === user.id}
                    onClick={() => setOpen(open === user.id ? null : user.id)}
                  >
                    Sessions
                  </button>
                  <a href={`#audit?user=${encodeURIComponent(user.id)}`}>
                    Audit events<span className="visually-hidden"> of {user.email}</span>
                  </a>
                  {!mayBeOwn(user) && (
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
              {open === user.id && (
                <tr>
                  <td colSpan={6} className="whole">
                    <UserSessions userId={user.id} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
      {list.loading && <p>Loading…</p>}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}

/** A user's live sessions, each of which the admin can end. */
function UserSessions({ userId }: { userId: string }) {
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
            <button type="button" onClick={() => end.mutate(s.id)}>
              End session
            </button>
          </li>
        ))}
      </ul>
    </div>
  )
}
