// API keys: create (the secret shown once, to copy), list, revoke. A key holds tenant
// permissions (CONTRACT §17), chosen at creation among the catalogue's (GET permissions),
// ticked by default as the creator's own (/me permissions: an Admin's are every one); one
// the creator does not hold cannot be ticked (the API would answer 403
// permission_required). The list shows what each key holds.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { Check, submitted } from './fields.tsx'
import { usePermissions } from './Roles.tsx'
import {
  ConfirmButton,
  ErrorText,
  formatDate,
  MoreButton,
  SecretOnce,
  Table,
  usePages,
} from './ui.tsx'

type ApiKey = Schemas['ApiKey']

export function ApiKeys() {
  const { session } = useConsole()
  const queries = useQueryClient()
  const [name, setName] = useState('')
  const [environment, setEnvironment] = useState<'live' | 'test'>('live')
  const [secret, setSecret] = useState('')
  const catalogue = usePermissions()
  const me = useQuery({ queryKey: ['me'], queryFn: () => session.api.getMe() })
  const mine = (me.data?.permissions ?? []) as string[]
  // Untouched (null), the creator's own; the catalogue's order either way.
  const [chosen, setChosen] = useState<string[] | null>(null)
  const names = catalogue.data?.map((p) => p.name) ?? []
  const picked = names.filter((n) => (chosen ?? mine).includes(n))
  const toggle = (name: string, on: boolean) =>
    setChosen(on ? [...picked, name] : picked.filter((n) => n !== name))
  /** What a key holds, in words: every permission, none, or their names. */
  const holds = (permissions: readonly string[]) =>
    names.length > 0 && names.every((n) => permissions.includes(n))
      ? 'Every permission'
      : permissions.length === 0
        ? 'None'
        : permissions.join(', ')
  const list = usePages<ApiKey>(['keys'], (cursor) =>
    session.api.listApiKeys({ query: { limit: 50, cursor } }),
  )
  const create = useMutation({
    mutationFn: () =>
      session.api.createApiKey({
        body: { name, environment, permissions: picked as Schemas['Permission']['name'][] },
      }),
    onSuccess: (created) => {
      setSecret(created.plaintext)
      setName('')
      setChosen(null)
      void queries.invalidateQueries({ queryKey: ['keys'] })
    },
  })
  const revoke = useMutation({
    mutationFn: (id: string) => session.api.revokeApiKey({ path: { id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['keys'] }),
  })
  const submit = submitted(() => create.mutate())
  return (
    <>
      <form className="inline-form" onSubmit={submit}>
        <div>
          <label htmlFor="key-name">Name</label>
          <input
            id="key-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={120}
          />
        </div>
        <div>
          <label htmlFor="key-env">Environment</label>
          <select
            id="key-env"
            value={environment}
            onChange={(e) => setEnvironment(e.target.value as 'live')}
          >
            <option value="live">live</option>
            <option value="test">test</option>
          </select>
        </div>
        <fieldset className="permission-list key-permissions">
          <legend>
            Permissions of the key ({picked.length} of {catalogue.data?.length ?? '…'} chosen)
          </legend>
          <ErrorText error={catalogue.error ?? me.error} />
          {me.isSuccess && names.some((n) => !mine.includes(n)) && (
            <p className="hint">
              A key holds only permissions you hold yourself: the others cannot be ticked.
            </p>
          )}
          {catalogue.data?.map((p) => {
            const held = mine.includes(p.name)
            return (
              <Check
                key={p.name}
                className="permission"
                id={`key-perm-${p.name}`}
                checked={picked.includes(p.name)}
                disabled={!held}
                onChange={(on) => toggle(p.name, on)}
                describedBy={`key-perm-${p.name}-d`}
                label={
                  <>
                    <code>{p.name}</code>
                    <span className="hint" id={`key-perm-${p.name}-d`}>
                      {p.description}
                    </span>
                  </>
                }
              />
            )
          })}
        </fieldset>
        <button
          type="submit"
          className="primary"
          disabled={create.isPending || !catalogue.isSuccess || !me.isSuccess}
        >
          Create key
        </button>
      </form>
      <ErrorText error={create.error ?? revoke.error ?? list.error} />
      {/* The new key's panel is as wide as the list below it, no wider. */}
      <div className="beside-list">
        {secret && (
          <SecretOnce
            secret={secret}
            what="key"
            testId="api-key"
            copyLabel="Copy"
            onDone={() => setSecret('')}
          />
        )}
        <Table
          className="cards"
          caption="API keys"
          columns={['Name', 'Key', 'Permissions', 'Created', 'Last used', 'Actions']}
        >
          {list.items.map((key) => (
            <tr key={key.id}>
              <td data-label="Name">{key.name}</td>
              <td data-label="Key">
                <code>{key.prefix}…</code>
              </td>
              <td data-label="Permissions" className="long">
                {holds(key.permissions)}
              </td>
              <td data-label="Created">{formatDate(key.createdAt)}</td>
              <td data-label="Last used">{formatDate(key.lastUsedAt)}</td>
              <td className="actions">
                {key.revokedAt ? (
                  'Revoked'
                ) : (
                  <ConfirmButton
                    label="Revoke"
                    danger
                    confirm="Revoke this key?"
                    onConfirm={() => revoke.mutate(key.id)}
                  />
                )}
              </td>
            </tr>
          ))}
        </Table>
      </div>
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}
