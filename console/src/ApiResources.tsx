// API resources (CONTRACT §11): the tenant's APIs that access tokens are issued for, each
// named by an absolute URI (the tokens' `aud`, RFC 8707), with its scopes and the roles
// that may be granted each (the built-ins and the custom roles, CONTRACT §17), and its
// tokens' lifetime. Listed page by page with a form to
// create one; #resources?id=<id> edits one. The API checks every field (409
// identifier_taken for an identifier already used) and its messages are shown by field.
import { useMutation, useQueryClient } from '@tanstack/react-query'
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
import { useRoles } from './Roles.tsx'
import { useRecord } from './record.tsx'
import {
  ConfirmButton,
  changedFrom,
  ErrorText,
  FieldError,
  formErrors,
  hashQuery,
  MoreButton,
  Table,
  usePages,
} from './ui.tsx'

type ApiResource = Schemas['ApiResource']
/** The built-ins, always offered; the tenant's custom roles follow (CONTRACT §17). */
const ROLES: string[] = ['Member', 'Admin']

interface ScopeDraft {
  name: string
  description: string
  roles: string[]
}

interface Draft {
  name: string
  identifier: string
  accessTokenTtlSeconds: string
  scopes: ScopeDraft[]
}

const FIELDS = ['name', 'identifier', 'accessTokenTtlSeconds', 'scopes']

function draftOf(r?: ApiResource): Draft {
  return {
    name: r?.name ?? '',
    identifier: r?.identifier ?? '',
    accessTokenTtlSeconds: String(r?.accessTokenTtlSeconds ?? 900),
    scopes: r?.scopes.map((s) => ({
      name: s.name,
      description: s.description ?? '',
      roles: [...s.roles],
    })) ?? [{ name: '', description: '', roles: [...ROLES] }],
  }
}

/** The body for the API; on edit only the fields that changed from `stored`. */
function bodyOf(draft: Draft, stored?: Draft): Record<string, unknown> {
  const ttl = draft.accessTokenTtlSeconds.trim()
  const body: Record<string, unknown> = {
    name: draft.name,
    identifier: draft.identifier.trim(),
    // Not a number is sent as it is, so the API's message says what it must be.
    accessTokenTtlSeconds: ttl === '' ? undefined : Number.isNaN(Number(ttl)) ? ttl : Number(ttl),
    scopes: draft.scopes.map((s) => ({
      name: s.name.trim(),
      ...(s.description.trim() ? { description: s.description.trim() } : {}),
      roles: s.roles,
    })),
  }
  if (!stored) return body
  return changedFrom(body, bodyOf(stored))
}

export function ApiResources() {
  const id = hashQuery().get('id')
  return id ? <EditResource id={id} /> : <ResourceList />
}

function ResourceList() {
  const { session } = useConsole()
  const queries = useQueryClient()
  // A new key empties the form once its resource is created.
  const [formKey, setFormKey] = useState(0)
  const list = usePages<ApiResource>(['resources'], (cursor) =>
    session.api.listApiResources({ query: { limit: 50, cursor } }),
  )
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      session.api.createApiResource({ body: body as never }),
    onSuccess: () => {
      setFormKey((k) => k + 1)
      void queries.invalidateQueries({ queryKey: ['resources'] })
    },
  })
  const remove = useMutation({
    mutationFn: (id: string) => session.api.deleteApiResource({ path: { id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['resources'] }),
  })
  return (
    <>
      <ErrorText error={list.error ?? remove.error} />
      {!list.loading && !list.error && list.items.length === 0 && (
        <p>No API resources yet: create the first one below.</p>
      )}
      {list.items.length > 0 && (
        <Table
          caption="API resources"
          columns={['Name', 'Identifier', 'Scopes', 'Token lifetime', 'Actions']}
        >
          {list.items.map((r) => (
            <tr key={r.id}>
              <td>{r.name}</td>
              <td>
                <code>{r.identifier}</code>
              </td>
              <td>{r.scopes.map((s) => s.name).join(' ')}</td>
              <td>{r.accessTokenTtlSeconds} s</td>
              <td className="actions">
                <a href={`#resources?id=${encodeURIComponent(r.id)}`}>
                  Edit<span className="visually-hidden"> {r.name}</span>
                </a>
                <ConfirmButton
                  label="Delete"
                  danger
                  confirm={`Delete ${r.name}?`}
                  onConfirm={() => remove.mutate(r.id)}
                />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
      <section aria-labelledby="new-resource-h">
        <h2 id="new-resource-h">New API resource</h2>
        <ResourceForm key={formKey} submitLabel="Create API resource" {...formOf(create)} />
        {create.isSuccess && <p role="status">Created {create.data.apiResource.name}.</p>}
      </section>
    </>
  )
}

function EditResource({ id }: { id: string }) {
  const { session } = useConsole()
  const { record, update } = useRecord<ApiResource>({
    area: 'resources',
    id,
    read: async () => (await session.api.getApiResource({ path: { id } })).apiResource,
    update: async (body) =>
      (await session.api.updateApiResource({ path: { id }, body: body as never })).apiResource,
  })
  const r = record.data
  return (
    <>
      <p>
        <a href="#resources">All API resources</a>
      </p>
      <ErrorText error={record.error} />
      {r && (
        <>
          <h2>{r.name}</h2>
          <ResourceForm
            key={r.updatedAt}
            initial={r}
            submitLabel="Save API resource"
            {...formOf(update)}
          />
          {update.isSuccess && <p role="status">Saved.</p>}
        </>
      )}
    </>
  )
}

function ResourceForm(props: FormProps<ApiResource>) {
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, FIELDS, { identifier_taken: 'identifier' })
  // The custom roles a scope may name; without roles:write (GET roles) only the built-ins.
  const roles = useRoles()
  const custom = (roles.data ?? []).filter((r) => !r.builtIn && r.kind === 'tenant')
  const offered = [...ROLES, ...custom.map((r) => r.name)]
  const id = initial ? `res-${initial.id}` : 'new-res'
  const set = <K extends keyof Draft>(field: K, value: Draft[K]) =>
    setDraft({ ...draft, [field]: value })
  const setScope = (i: number, scope: Partial<ScopeDraft>) =>
    set(
      'scopes',
      draft.scopes.map((s, j) => (j === i ? { ...s, ...scope } : s)),
    )
  const submit = submitted(() => props.onSubmit(bodyOf(draft, initial && draftOf(initial))))
  const text = fieldsOf(id, draft, set, errors)
  const field = (name: 'name' | 'identifier' | 'accessTokenTtlSeconds', label: string) => (
    <TextField
      label={label}
      inputMode={name === 'accessTokenTtlSeconds' ? 'numeric' : undefined}
      {...text(name)}
    />
  )
  return (
    <form className="settings" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      {field('name', 'Name')}
      {field('identifier', 'Identifier (an absolute URI, the tokens’ audience)')}
      {field('accessTokenTtlSeconds', 'Access token lifetime in seconds (60 to 86400)')}
      {draft.scopes.map((scope, i) => {
        const at = `scopes.${i}`
        const sid = `${id}-scope-${i}`
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, by position
          <fieldset key={i} className="scope">
            <legend>Scope {i + 1}</legend>
            <TextField
              id={`${sid}-name`}
              label="Name"
              value={scope.name}
              onChange={(name) => setScope(i, { name })}
              messages={errors.of(`${at}.name`)}
            />
            <TextField
              id={`${sid}-description`}
              label="Description (optional)"
              value={scope.description}
              onChange={(description) => setScope(i, { description })}
              messages={errors.of(`${at}.description`)}
            />
            <fieldset className="roles">
              <legend>Roles that may be granted it</legend>
              {[...offered, ...scope.roles.filter((r) => !offered.includes(r))].map((role, k) => (
                <Check
                  key={role}
                  id={`${sid}-role-${k}`}
                  checked={scope.roles.includes(role)}
                  onChange={(on) =>
                    setScope(i, {
                      roles: on ? [...scope.roles, role] : scope.roles.filter((r) => r !== role),
                    })
                  }
                  label={role}
                />
              ))}
            </fieldset>
            <FieldError id={`${sid}-roles-error`} messages={errors.of(`${at}.roles`)} />
            <button
              type="button"
              onClick={() =>
                set(
                  'scopes',
                  draft.scopes.filter((_, j) => j !== i),
                )
              }
            >
              Remove scope {i + 1}
            </button>
          </fieldset>
        )
      })}
      <FieldError id={`${id}-scopes-error`} messages={errors.of('scopes', true)} />
      <button
        type="button"
        onClick={() =>
          set('scopes', [...draft.scopes, { name: '', description: '', roles: [...ROLES] }])
        }
      >
        Add a scope
      </button>
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}
