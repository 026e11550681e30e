// One organization (CONTRACT §18): what it is (members, JIT domains and roles, whether its
// tokens need a second factor), its members (OrganizationMembers.tsx), its invitations
// (OrganizationInvitations.tsx), its settings, and deletion, which takes its memberships
// and invitations with it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { OrganizationForm } from './OrganizationForm.tsx'
import { Invitations } from './OrganizationInvitations.tsx'
import { Members } from './OrganizationMembers.tsx'
import { ConfirmButton, ErrorText, formatDate } from './ui.tsx'

type Organization = Schemas['Organization']

export function OrganizationPage({ id }: { id: string }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const key = ['organizations', id]
  const organization = useQuery({
    queryKey: key,
    queryFn: async () => (await session.api.getOrganization({ path: { id } })).organization,
  })
  // Each save starts the form afresh from the record answered, even when two saves share
  // one updatedAt.
  const [saves, setSaves] = useState(0)
  const update = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      session.api.updateOrganization({ path: { id }, body: body as never }),
    onSuccess: (updated) => {
      queries.setQueryData(key, updated.organization)
      void queries.invalidateQueries({ queryKey: ['organizations'], exact: true })
      setSaves((n) => n + 1)
    },
  })
  const remove = useMutation({
    mutationFn: () => session.api.deleteOrganization({ path: { id } }),
    onSuccess: () => {
      // The list loads afresh rather than show the deleted organization for a moment.
      queries.removeQueries({ queryKey: key })
      queries.removeQueries({ queryKey: ['organizations'], exact: true })
      window.location.hash = '#organizations'
    },
  })
  const o = organization.data
  return (
    <>
      <p>
        <a href="#organizations">All organizations</a>
      </p>
      <ErrorText error={organization.error} />
      {o && (
        <div className="org-page">
          <h2 className="hook-url">{o.name}</h2>
          <Facts organization={o} />
          <Members organizationId={id} />
          <Invitations organizationId={id} organizationName={o.name} />
          <section aria-labelledby="org-settings-h">
            <h2 id="org-settings-h">Settings</h2>
            <OrganizationForm
              key={`${o.updatedAt}:${saves}`}
              initial={o}
              submitLabel="Save organization"
              pending={update.isPending}
              error={update.error}
              onSubmit={(body) => update.mutate(body)}
            />
            {update.isSuccess && !update.isPending && <p role="status">Saved.</p>}
          </section>
          <section aria-labelledby="org-delete-h">
            <h2 id="org-delete-h">Delete</h2>
            <p className="hint">
              Its memberships and invitations go with it; its members keep their accounts.
            </p>
            <ErrorText error={remove.error} />
            <ConfirmButton
              label="Delete organization"
              danger
              confirm={`Delete ${o.name}?`}
              onConfirm={() => remove.mutate()}
            />
          </section>
        </div>
      )}
    </>
  )
}

function Facts({ organization: o }: { organization: Organization }) {
  return (
    <dl className="facts app-facts">
      <dt>Description</dt>
      <dd>{o.description ?? '—'}</dd>
      <dt>Members</dt>
      <dd>{o.memberCount}</dd>
      <dt>JIT domains</dt>
      <dd className="domains">{o.jit.emailDomains.join(', ') || '—'}</dd>
      <dt>JIT roles</dt>
      <dd>{o.jit.roles.join(', ') || '—'}</dd>
      <dt>Second factor</dt>
      <dd>{o.mfaRequired ? 'Required for its tokens' : 'Not required'}</dd>
      <dt>Created</dt>
      <dd>{formatDate(o.createdAt)}</dd>
    </dl>
  )
}
