// An organization's members (CONTRACT §18), page by page with their organization roles;
// a member's roles set in their row (PUT members/{userId}, the set replaced), removal with
// a confirmation, and a form that adds a user of the workspace, named by email address or
// user ID, with the roles ticked. The API names no user by address, so the address is
// looked up in the users list (users:read), page by page until found; an ID is sent as it
// is and the API says 404 when no user has it.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { Fragment, useState } from 'react'
import type { SessionClient } from '../../sdk/src/session.ts'
import { type Schemas, useConsole } from './api.ts'
import { submitted } from './fields.tsx'
import { RoleChecks } from './OrganizationForm.tsx'
import { ConfirmButton, ErrorText, formatDate, MoreButton, Table, usePages } from './ui.tsx'

type Member = Schemas['OrganizationMember']

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** How many pages of users (200 each) an address is looked for in. */
const USER_PAGES = 50

/** The id of the user `who` names: an ID as it is, an address looked up in the users list. */
async function userIdOf(session: SessionClient, who: string): Promise<string> {
  if (UUID.test(who)) return who.toLowerCase()
  const email = who.toLowerCase()
  let cursor: string | undefined
  for (let n = 0; n < USER_PAGES; n++) {
    const page = await session.api.listUsers({ query: { limit: 200, cursor } })
    const found = page.items.find((u) => u.email.toLowerCase() === email)
    if (found) return found.id
    cursor = page.nextCursor ?? undefined
    if (!cursor) throw new Error(`No user of this workspace has the address ${who}.`)
  }
  throw new Error(`${who} is not among the first users listed: add them by their user ID.`)
}

export function Members({ organizationId }: { organizationId: string }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const key = ['organizations', organizationId, 'members']
  const [open, setOpen] = useState<string | null>(null)
  const list = usePages<Member>(key, (cursor) =>
    session.api.listOrganizationMembers({
      path: { id: organizationId },
      query: { limit: 50, cursor },
    }),
  )
  /** The members and the organization's count change together. */
  const changed = () => {
    void queries.invalidateQueries({ queryKey: key })
    void queries.invalidateQueries({ queryKey: ['organizations', organizationId], exact: true })
    void queries.invalidateQueries({ queryKey: ['organizations'], exact: true })
  }
  const remove = useMutation({
    mutationFn: (userId: string) =>
      session.api.removeOrganizationMember({ path: { id: organizationId, userId } }),
    onSuccess: changed,
  })
  return (
    <section aria-labelledby="org-members-h">
      <h2 id="org-members-h">Members</h2>
      <ErrorText error={list.error ?? remove.error} />
      {!list.loading && !list.error && list.items.length === 0 && (
        <p>No members yet: add a user below, or invite an address.</p>
      )}
      {list.items.length > 0 && (
        <Table
          className="cards"
          caption="Members"
          columns={['Email', 'Organization roles', 'Joined', 'Actions']}
        >
          {list.items.map((m) => (
            <Fragment key={m.userId}>
              <tr>
                <td data-label="Email" className="long">
                  {m.email}
                </td>
                <td data-label="Organization roles" className="long">
                  {m.roles.length ? m.roles.join(', ') : '—'}
                </td>
                <td data-label="Joined">{formatDate(m.joinedAt)}</td>
                <td className="actions">
                  <button
                    type="button"
                    aria-expanded={open === m.userId}
                    onClick={() => setOpen(open === m.userId ? null : m.userId)}
                  >
                    Roles<span className="visually-hidden"> of {m.email}</span>
                  </button>
                  <ConfirmButton
                    label="Remove"
                    danger
                    confirm={`Remove ${m.email}?`}
                    onConfirm={() => remove.mutate(m.userId)}
                  />
                </td>
              </tr>
              {open === m.userId && (
                <tr>
                  <td colSpan={4} className="whole">
                    <MemberRoles
                      organizationId={organizationId}
                      member={m}
                      onDone={() => {
                        setOpen(null)
                        changed()
                      }}
                      onCancel={() => setOpen(null)}
                    />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </Table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
      <AddMember organizationId={organizationId} onAdded={changed} />
    </section>
  )
}

/** A member's organization roles, ticked and saved together (the set is replaced). */
function MemberRoles(props: {
  organizationId: string
  member: Member
  onDone(): void
  onCancel(): void
}) {
  const { session } = useConsole()
  const { member } = props
  const [chosen, setChosen] = useState<string[]>(member.roles)
  const save = useMutation({
    mutationFn: () =>
      session.api.setOrganizationMember({
        path: { id: props.organizationId, userId: member.userId },
        body: { roles: chosen },
      }),
    onSuccess: props.onDone,
  })
  return (
    <form className="sub user-roles" onSubmit={submitted(() => save.mutate())}>
      <ErrorText error={save.error} />
      <RoleChecks
        id={`member-${member.userId}`}
        legend={`Organization roles of ${member.email}`}
        chosen={chosen}
        onChange={setChosen}
      />
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          Save roles
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function AddMember({ organizationId, onAdded }: { organizationId: string; onAdded(): void }) {
  const { session } = useConsole()
  const [who, setWho] = useState('')
  const [roles, setRoles] = useState<string[]>([])
  const add = useMutation({
    mutationFn: async () => {
      const userId = await userIdOf(session, who.trim())
      return session.api.setOrganizationMember({
        path: { id: organizationId, userId },
        body: { roles },
      })
    },
    onSuccess: () => {
      setWho('')
      setRoles([])
      onAdded()
    },
  })
  const submit = submitted(() => add.mutate())
  return (
    <form className="settings org-add" onSubmit={submit}>
      <h3>Add a member</h3>
      {add.isSuccess && (
        <p role="status" className="created-line">
          {add.data.member.email} is a member.
        </p>
      )}
      <ErrorText error={add.error} />
      <label htmlFor="org-add-user">User</label>
      <p className="hint" id="org-add-user-hint">
        Their email address or user ID. A member already keeps their place and gets these roles.
      </p>
      <input
        id="org-add-user"
        value={who}
        onChange={(e) => {
          setWho(e.target.value)
          // A new name: the last answer (an address no user has) no longer applies.
          if (add.isError || add.isSuccess) add.reset()
        }}
        required
        spellCheck={false}
        aria-describedby="org-add-user-hint"
      />
      <RoleChecks id="org-add" legend="Organization roles" chosen={roles} onChange={setRoles} />
      <button type="submit" className="primary" disabled={add.isPending || !who.trim()}>
        Add member
      </button>
    </form>
  )
}
