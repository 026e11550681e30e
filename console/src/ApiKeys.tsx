// API keys: create (the secret shown once, to copy), list, revoke.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { ConfirmButton, CopyButton, ErrorText, formatDate, MoreButton, usePages } from './ui.tsx'

type ApiKey = Schemas['ApiKey']

export function ApiKeys() {
  const { session } = useConsole()
  const queries = useQueryClient()
  const [name, setName] = useState('')
  const [environment, setEnvironment] = useState<'live' | 'test'>('live')
  const [secret, setSecret] = useState('')
  const list = usePages<ApiKey>(['keys'], (cursor) =>
    session.api.listApiKeys({ query: { limit: 50, cursor } }),
  )
  const create = useMutation({
    mutationFn: () => session.api.createApiKey({ body: { name, environment } }),
    onSuccess: (created) => {
      setSecret(created.plaintext)
      setName('')
      void queries.invalidateQueries({ queryKey: ['keys'] })
    },
  })
  const revoke = useMutation({
    mutationFn: (id: string) => session.api.revokeApiKey({ path: { id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['keys'] }),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
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
        <button type="submit" className="primary" disabled={create.isPending}>
          Create key
        </button>
      </form>
      <ErrorText error={create.error ?? revoke.error ?? list.error} />
      {/* The new key's panel is as wide as the list below it, no wider. */}
      <div className="beside-list">
        {secret && (
          <div className="created" role="status">
            <p>
              <strong>Copy the key now:</strong> it is shown this once and cannot be read again.
            </p>
            <code className="secret" data-testid="api-key">
              {secret}
            </code>
            <div className="row">
              <CopyButton text={secret} />
              <button type="button" onClick={() => setSecret('')}>
                Done
              </button>
            </div>
          </div>
        )}
        <table className="cards">
          <caption className="visually-hidden">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((key) => (
              <tr key={key.id}>
                <td data-label="Name">{key.name}</td>
                <td data-label="Key">
                  <code>{key.prefix}…</code>
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
          </tbody>
        </table>
      </div>
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
    </>
  )
}
