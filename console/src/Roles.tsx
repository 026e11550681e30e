// Roles (CONTRACT §17): the tenant's roles, the built-ins (Admin, Member: listed, not
// editable) first, then the custom ones; a form to create one and, at #roles?id=<id>, to
// change or delete one. A role holds permissions of the service's catalogue (GET
// permissions, each with what it guards) and scopes of the tenant's API resources, picked
// per resource. The API checks the rest (a taken name, a role the admin may not widen) and
// its message is shown by the field it names or above the form.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import {
  Check,
  type FormProps,
  fieldsOf,
  formOf,
  SubmitButton,
  submitted,
  TextField,
} from './fields.tsx'
import { DeleteButton } from './record.tsx'
import {
  changedFrom,
  ErrorText,
  FieldError,
  formatDate,
  formErrors,
  hashQuery,
  Table,
  usePages,
} from './ui.tsx'

type Role = Schemas['Role']
type Permission = Schemas['Permission']
type ApiResource = Schemas['ApiResource']

export function Roles() {
  const id = hashQuery().get('id')
  return id ? <RolePage id={id} /> : <RoleList />
}

/**
 * Every role of the tenant (the built-ins and at most 100 custom roles), every page read
 * by following nextCursor: the users' role choices need them all at once.
 */
export function useRoles() {
  const { session } = useConsole()
  return useQuery({
    queryKey: ['roles'],
    queryFn: async () => {
      const all: Role[] = []
      let cursor: string | undefined
      do {
        const page = await session.api.listRoles({ query: { limit: 200, cursor } })
        all.push(...page.items)
        cursor = page.nextCursor ?? undefined
      } while (cursor)
      return all
    },
  })
}

/** The service's permission catalogue (GET permissions): fixed, read once. */
export function usePermissions() {
  const { session } = useConsole()
  return useQuery({
    queryKey: ['permissions'],
    queryFn: async () => (await session.api.listPermissions()).items,
    staleTime: Number.POSITIVE_INFINITY,
  })
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`

const summary = (role: Role) => {
  const scopes = role.resourceScopes.reduce((n, r) => n + r.scopes.length, 0)
  if (role.kind === 'organization') return count(scopes, 'API scope')
  return [
    count(role.permissions.length, 'permission'),
    ...(scopes ? [count(scopes, 'API scope')] : []),
  ].join(', ')
}

function RoleList() {
  const { session } = useConsole()
  const queries = useQueryClient()
  const roles = useRoles()
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) => session.api.createRole({ body: body as never }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['roles'] }),
  })
  const [created, setCreated] = useState(0)
  return (
    <>
      <p className="hint intro">
        What the workspace's people may do in the administration API and this console. Admin holds
        every permission and Member none; a custom role adds its permissions and API scopes to the
        users it is given (in Users).
      </p>
      <ErrorText error={roles.error} />
      {roles.data && (
        <Table
          className="cards role-list"
          caption="Roles"
          columns={['Role', 'Description', 'Grants', 'Created']}
        >
          {roles.data.map((role) => (
            <tr key={role.id}>
              <td data-label="Role" className="long">
                {role.builtIn ? (
                  // One element: on a phone the cell is a grid of its label and its value.
                  <span>
                    <strong>{role.name}</strong> <span className="badge">Built-in</span>
                  </span>
                ) : (
                  <a href={`#roles?id=${encodeURIComponent(role.id)}`}>{role.name}</a>
                )}
              </td>
              <td data-label="Description" className="long">
                {role.builtIn
                  ? role.name === 'Admin'
                    ? 'Every permission. Not editable.'
                    : 'No administration permission. Not editable.'
                  : (role.description ?? '—')}
              </td>
              <td data-label="Grants">
                {role.kind === 'organization' ? (
                  <span>
                    {summary(role)} <span className="badge">Organization</span>
                  </span>
                ) : (
                  summary(role)
                )}
              </td>
              <td data-label="Created">{role.builtIn ? '—' : formatDate(role.createdAt)}</td>
            </tr>
          ))}
        </Table>
      )}
      <section aria-labelledby="new-role-h">
        <h2 id="new-role-h">New role</h2>
        {create.isSuccess && (
          <p role="status" className="created-line">
            Role {create.data.role.name} created.
          </p>
        )}
        <RoleForm
          // A fresh, empty form after each role created.
          key={created}
          submitLabel="Create role"
          pending={create.isPending}
          error={create.error}
          onSubmit={(body) => create.mutate(body, { onSuccess: () => setCreated((n) => n + 1) })}
        />
      </section>
    </>
  )
}

function RolePage({ id }: { id: string }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const role = useQuery({
    queryKey: ['role', id],
    queryFn: async () => (await session.api.getRole({ path: { id } })).role,
  })
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      session.api.updateRole({ path: { id }, body: body as never }),
    onSuccess: (answer) => {
      queries.setQueryData(['role', id], answer.role)
      void queries.invalidateQueries({ queryKey: ['roles'] })
    },
  })
  const remove = useMutation({
    mutationFn: () => session.api.deleteRole({ path: { id } }),
    onSuccess: () => {
      // Gone from the kept list at once, so the list shown next never holds it; then read
      // again with the users (whose roles lost it).
      queries.setQueryData<Role[]>(['roles'], (kept) => kept?.filter((r) => r.id !== id))
      void queries.invalidateQueries({ queryKey: ['roles'] })
      void queries.invalidateQueries({ queryKey: ['users'] })
      window.location.hash = '#roles'
    },
  })
  return (
    <>
      <p>
        <a href="#roles">All roles</a>
      </p>
      <ErrorText error={role.error} />
      {role.data && (
        <section aria-labelledby="role-h">
          <h2 id="role-h">{role.data.name}</h2>
          {role.data.builtIn ? (
            <p>A built-in role: it cannot be changed or deleted.</p>
          ) : (
            <>
              {save.isSuccess && !save.isPending && <p role="status">Saved.</p>}
              <RoleForm initial={role.data} submitLabel="Save role" {...formOf(save)} />
              <h3>Delete</h3>
              <p className="hint">
                The users holding it lose its permissions at once; their base role stays.
              </p>
              <ErrorText error={remove.error} />
              <DeleteButton
                label="Delete role"
                confirm={`Delete ${role.data.name}?`}
                remove={remove}
              />
            </>
          )}
        </section>
      )}
    </>
  )
}

interface Draft {
  name: string
  /** Chosen at creation only: an organization role (CONTRACT §18) holds API scopes only. */
  kind: Role['kind']
  description: string
  permissions: string[]
  /** API resource identifier → the scopes chosen of it. */
  scopes: Record<string, string[]>
}

const FIELDS = ['name', 'kind', 'description', 'permissions', 'resourceScopes']

const KINDS: [Role['kind'], string][] = [
  ['tenant', 'Workspace role: administration permissions and API scopes'],
  ['organization', 'Organization role: API scopes inside an organization'],
]

const draftOf = (role?: Role): Draft => ({
  name: role?.name ?? '',
  kind: role?.kind ?? 'tenant',
  description: role?.description ?? '',
  permissions: role?.permissions ?? [],
  scopes: Object.fromEntries((role?.resourceScopes ?? []).map((r) => [r.resource, r.scopes])),
})

/** The body for the API; on edit only what changed. Lists in the catalogue's order. */
function bodyOf(
  draft: Draft,
  catalogue: Permission[],
  resources: ApiResource[],
  stored?: Draft,
): Record<string, unknown> {
  const resourceScopes = resources
    .map((r) => ({
      resource: r.identifier,
      scopes: r.scopes.map((s) => s.name).filter((s) => draft.scopes[r.identifier]?.includes(s)),
    }))
    .filter((r) => r.scopes.length > 0)
  // Scopes of a resource no longer listed (removed since) are kept as they were.
  for (const [resource, scopes] of Object.entries(draft.scopes)) {
    if (scopes.length && !resources.some((r) => r.identifier === resource)) {
      resourceScopes.push({ resource, scopes })
    }
  }
  const body: Record<string, unknown> = {
    name: draft.name.trim(),
    description: draft.description.trim() || (stored ? null : undefined),
    permissions:
      draft.kind === 'organization'
        ? []
        : catalogue.map((p) => p.name).filter((p) => draft.permissions.includes(p)),
    resourceScopes,
  }
  if (!stored) return draft.kind === 'organization' ? { ...body, kind: draft.kind } : body
  return changedFrom(body, bodyOf(stored, catalogue, resources))
}

function RoleForm(props: FormProps<Role>) {
  const { session } = useConsole()
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const catalogue = usePermissions()
  const resources = usePages<ApiResource>(['resources'], (cursor) =>
    session.api.listApiResources({ query: { limit: 50, cursor } }),
  )
  const errors = formErrors(props.error, FIELDS, { name_taken: 'name' })
  const id = initial ? `role-${initial.id}` : 'new-role'
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft((d) => ({ ...d, [key]: value }))
  const togglePermission = (name: string, on: boolean) =>
    set(
      'permissions',
      on ? [...draft.permissions, name] : draft.permissions.filter((p) => p !== name),
    )
  const toggleScope = (resource: string, scope: string, on: boolean) => {
    const held = draft.scopes[resource] ?? []
    set('scopes', {
      ...draft.scopes,
      [resource]: on ? [...held, scope] : held.filter((s) => s !== scope),
    })
  }
  const submit = submitted(() => {
    props.onSubmit(
      bodyOf(draft, catalogue.data ?? [], resources.items, initial && draftOf(initial)),
    )
  })
  const permissionErrors = errors.of('permissions')
  const scopeErrors = errors.of('resourceScopes')
  const withScopes = resources.items.filter((r) => r.scopes.length > 0)
  const text = fieldsOf(id, draft, set, errors)
  return (
    <form className="settings role-form" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      <TextField label="Name" required maxLength={64} {...text('name')} />
      <TextField label="Description (optional)" maxLength={500} {...text('description')} />
      {!initial && (
        <fieldset className="choice">
          <legend>Kind</legend>
          {KINDS.map(([value, label]) => (
            <Check
              key={value}
              id={`${id}-kind-${value}`}
              name={`${id}-kind`}
              checked={draft.kind === value}
              onChange={() => set('kind', value)}
              label={label}
            />
          ))}
        </fieldset>
      )}
      {draft.kind === 'organization' ? (
        <p className="hint">
          An organization role is the same in every organization: its members hold it there (in
          Organizations), and it grants API scopes only.
        </p>
      ) : (
        <fieldset
          className="permission-list"
          aria-describedby={permissionErrors.length ? `${id}-permissions-error` : undefined}
        >
          <legend>
            Permissions ({draft.permissions.length} of {catalogue.data?.length ?? '…'} chosen)
          </legend>
          <ErrorText error={catalogue.error} />
          {catalogue.data?.map((p) => (
            <Check
              key={p.name}
              className="permission"
              id={`${id}-perm-${p.name}`}
              checked={draft.permissions.includes(p.name)}
              onChange={(on) => togglePermission(p.name, on)}
              describedBy={`${id}-perm-${p.name}-d`}
              label={
                <>
                  <code>{p.name}</code>
                  <span className="hint" id={`${id}-perm-${p.name}-d`}>
                    {p.description}
                  </span>
                </>
              }
            />
          ))}
          <FieldError id={`${id}-permissions-error`} messages={permissionErrors} />
        </fieldset>
      )}
      <fieldset
        className="resource-scopes"
        aria-describedby={scopeErrors.length ? `${id}-scopes-error` : undefined}
      >
        <legend>API resource scopes</legend>
        <ErrorText error={resources.error} />
        {!resources.loading && withScopes.length === 0 && (
          <p className="hint">
            No API resource has scopes yet (<a href="#resources">API resources</a>).
          </p>
        )}
        {withScopes.map((r) => (
          <fieldset key={r.id} className="resource">
            <legend>
              {r.name} <span className="mono hint">{r.identifier}</span>
            </legend>
            {r.scopes.map((s) => (
              <Check
                key={s.name}
                id={`${id}-scope-${r.id}-${s.name}`}
                checked={draft.scopes[r.identifier]?.includes(s.name) ?? false}
                onChange={(on) => toggleScope(r.identifier, s.name, on)}
                label={
                  <>
                    <code>{s.name}</code>
                    {s.description && <span className="hint">{s.description}</span>}
                  </>
                }
              />
            ))}
          </fieldset>
        ))}
        {resources.hasMore && (
          <button type="button" onClick={() => resources.more()} disabled={resources.loadingMore}>
            More API resources
          </button>
        )}
        <FieldError id={`${id}-scopes-error`} messages={scopeErrors} />
      </fieldset>
      <SubmitButton label={props.submitLabel} pending={props.pending || !catalogue.data} />
    </form>
  )
}
