// Invites: create one (mailed, and its link shown to copy), list, revoke.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { submitted } from './fields.tsx'
import {
  ConfirmButton,
  ErrorText,
  formatDate,
  MoreButton,
  ShownOnce,
  Table,
  usePages,
} from './ui.tsx'

type Invite = Schemas['Invite']

export function Invites() {
  const { session, tenant } = useConsole()
  const queries = useQueryClient()
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<'Member' | 'Admin'>('Member')
  const [link, setLink] = useState('')
  const list = usePages<Invite>(['invites'], (cursor) =>
    session.api.listInvites({ query: { limit: 50, cursor } }),
  )
  const create = useMutation({
    mutationFn: () => session.api.createInvite({ body: { email, role } }),
    onSuccess: (created) => {
      setLink(
        `${window.location.origin}/t/${tenant}/invite?token=${encodeURIComponent(created.token)}`,
      )
      setEmail('')
      void queries.invalidateQueries({ queryKey: ['invites'] })
    },
  })
  const revoke = useMutation({
    mutationFn: (id: string) => session.api.revokeInvite({ path: { id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['invites'] }),
  })
  const submit = submitted(() => create.mutate())
  return (
    <>
      <form className="inline-form" onSubmit={submit}>
        <div>
          <label htmlFor="invite-email">Email address</label>
          <input
            id="invite-email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
          />
        </div>
        <div>
          <label htmlFor="invite-role">Role</label>
          <select
            id="invite-role"
            value={role}
            onChange={(e) => setRole(e.target.value as 'Member')}
          >
            <option>Member</option>
            <option>Admin</option>
          </select>
        </div>
        <button type="submit" className="primary" disabled={create.isPending}>
          Invite
        </button>
      </form>
      <ErrorText error={create.error ?? revoke.error ?? list.error} />
      {link && (
        <ShownOnce value={link} testId="invite-link" copyLabel="Copy link">
          Invitation sent. Its link, for sharing another way:
        </ShownOnce>
      )}
      <Table
        className="cards"
        caption="Invites"
        columns={['Email', 'Role', 'Status', 'Expires', 'Actions']}
      >
        {list.items.map((invite) => (
          <tr key={invite.id}>
            <td data-label="Email" className="long">
              {invite.email}
            </td>
            <td data-label="Role">{invite.role}</td>
            <td data-label="Status">{invite.status}</td>
            <td data-label="Expires">{formatDate(invite.expiresAt)}</td>
            <td className="actions">
              {invite.status === 'Pending' && (
                <ConfirmButton
                  label="Revoke"
                  danger
                  confirm="Revoke this invite?"
                  onConfirm={() => revoke.mutate(invite.id)}
                />
              )}
            </td>
          </tr>
        ))}
      </Table>
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}
