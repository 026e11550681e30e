// An organization's invitations (CONTRACT §18): a form that invites an address with
// organization roles (mailed unless unticked), whose link is shown this once (the service
// keeps only the token's hash: neither the link nor the token can be read again); the
// pending invitations page by page, each revocable after a confirmation, and the past ones
// (accepted, revoked, expired) on request. A second invitation of the same address replaces
// the first, as the API does.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { Check, SubmitButton, submitted, TextField } from './fields.tsx'
import { RoleChecks } from './OrganizationForm.tsx'
import {
  ConfirmButton,
  ErrorText,
  formatDate,
  formErrors,
  MoreButton,
  ShownOnce,
  Table,
  usePages,
} from './ui.tsx'

type Invitation = Schemas['OrganizationInvitation']

export function Invitations(props: { organizationId: string; organizationName: string }) {
  const { organizationId } = props
  const { session, tenant } = useConsole()
  const queries = useQueryClient()
  const key = ['organizations', organizationId, 'invitations']
  const [email, setEmail] = useState('')
  const [roles, setRoles] = useState<string[]>([])
  const [sendEmail, setSendEmail] = useState(true)
  const [link, setLink] = useState<{ email: string; url: string; mailed: boolean } | null>(null)
  const [past, setPast] = useState(false)
  const list = usePages<Invitation>(key, (cursor) =>
    session.api.listOrganizationInvitations({
      path: { id: organizationId },
      query: { limit: 50, cursor },
    }),
  )
  const create = useMutation({
    mutationFn: () =>
      session.api.createOrganizationInvitation({
        path: { id: organizationId },
        body: { email: email.trim(), roles, sendEmail },
      }),
    onSuccess: (created) => {
      setLink({
        email: created.invitation.email,
        url: `${window.location.origin}/t/${encodeURIComponent(tenant)}/organization-invite?token=${encodeURIComponent(created.token)}`,
        mailed: sendEmail,
      })
      setEmail('')
      setRoles([])
      void queries.invalidateQueries({ queryKey: key })
    },
  })
  const revoke = useMutation({
    mutationFn: (invitationId: string) =>
      session.api.revokeOrganizationInvitation({ path: { id: organizationId, invitationId } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: key }),
  })
  const errors = formErrors(create.error, ['email', 'roles'])
  const submit = submitted(() => {
    setLink(null)
    create.mutate()
  })
  const shown = past ? list.items : list.items.filter((i) => i.status === 'Pending')
  return (
    <section aria-labelledby="org-invitations-h">
      <h2 id="org-invitations-h">Invitations</h2>
      {link && (
        <ShownOnce
          value={link.url}
          testId="organization-invite-link"
          copyLabel="Copy link"
          onDone={() => setLink(null)}
        >
          <strong>
            {link.email} is invited to {props.organizationName}.
          </strong>{' '}
          {link.mailed ? 'The mail is on its way. ' : 'No mail was sent. '}
          Copy the invitation link now if you share it another way: it is shown this once.
        </ShownOnce>
      )}
      <form className="settings org-invite" onSubmit={submit} noValidate>
        <h3>Invite someone</h3>
        <ErrorText error={errors.rest} />
        <TextField
          id="org-invite-email"
          label="Email address"
          type="email"
          value={email}
          onChange={setEmail}
          required
          messages={errors.of('email')}
        />
        <RoleChecks
          id="org-invite"
          legend="Organization roles on accepting"
          chosen={roles}
          onChange={setRoles}
          messages={errors.of('roles')}
        />
        <Check
          id="org-invite-send"
          checked={sendEmail}
          onChange={setSendEmail}
          label="Send the invitation by email"
        />
        <SubmitButton label="Invite" pending={create.isPending} />
      </form>
      <h3>{past ? 'All invitations' : 'Pending invitations'}</h3>
      <Check
        id="org-invite-past"
        checked={past}
        onChange={setPast}
        label="Show accepted, revoked and expired ones too"
      />
      <ErrorText error={list.error ?? revoke.error} />
      {!list.loading && !list.error && shown.length === 0 && (
        <p>{past ? 'No invitations yet.' : 'No pending invitations.'}</p>
      )}
      {shown.length > 0 && (
        <Table
          className="cards"
          caption="Invitations"
          columns={['Email', 'Roles', 'Status', 'Expires', 'Actions']}
        >
          {shown.map((i) => (
            <tr key={i.id}>
              <td data-label="Email" className="long">
                {i.email}
              </td>
              <td data-label="Roles" className="long">
                {i.roles.length ? i.roles.join(', ') : '—'}
              </td>
              <td data-label="Status">{i.status}</td>
              <td data-label="Expires">{formatDate(i.expiresAt)}</td>
              <td className="actions">
                {i.status === 'Pending' && (
                  <ConfirmButton
                    label="Revoke"
                    danger
                    confirm={`Revoke the invitation of ${i.email}?`}
                    onConfirm={() => revoke.mutate(i.id)}
                  />
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </section>
  )
}
