// One organization (CONTRACT §18): what it is (members, JIT domains and roles, whether its
// tokens need a second factor), its members (OrganizationMembers.tsx), its invitations
// (OrganizationInvitations.tsx), its settings, and deletion, which takes its memberships
// and invitations with it.
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { OrganizationForm } from './OrganizationForm.tsx'
import { Invitations } from './OrganizationInvitations.tsx'
import { Members } from './OrganizationMembers.tsx'
import { DeleteButton, SettingsSection, useRecord } from './record.tsx'
import { ErrorText, formatDate } from './ui.tsx'

type Organization = Schemas['Organization']

export function OrganizationPage({ id }: { id: string }) {
  const { session } = useConsole()
  const { record, update, remove, saves } = useRecord<Organization>({
    area: 'organizations',
    id,
    read: async () => (await session.api.getOrganization({ path: { id } })).organization,
    update: async (body) =>
      (await session.api.updateOrganization({ path: { id }, body: body as never })).organization,
    remove: () => session.api.deleteOrganization({ path: { id } }),
    dropList: true,
  })
  const o = record.data
  return (
    <>
      <p>
        <a href="#organizations">All organizations</a>
      </p>
      <ErrorText error={record.error} />
      {o && (
        <div className="org-page">
          <h2 className="hook-url">{o.name}</h2>
          <Facts organization={o} />
          <Members organizationId={id} />
          <Invitations organizationId={id} organizationName={o.name} />
          <SettingsSection id="org-settings-h" saved={update.isSuccess && !update.isPending}>
            <OrganizationForm
              key={`${o.updatedAt}:${saves}`}
              initial={o}
              submitLabel="Save organization"
              {...formOf(update)}
            />
          </SettingsSection>
          <section aria-labelledby="org-delete-h">
            <h2 id="org-delete-h">Delete</h2>
            <p className="hint">
              Its memberships and invitations go with it; its members keep their accounts.
            </p>
            <ErrorText error={remove.error} />
            <DeleteButton
              label="Delete organization"
              confirm={`Delete ${o.name}?`}
              remove={remove}
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
