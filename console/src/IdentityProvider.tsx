// The identity provider's OAuth client credentials: stored encrypted by the service, the
// secret never shown again; removing them turns the sign-in off.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { useConsole } from './api.ts'
import { ConfirmButton, ErrorText } from './ui.tsx'

export function IdentityProvider() {
  const { session } = useConsole()
  const queries = useQueryClient()
  const tenant = useQuery({ queryKey: ['tenant'], queryFn: () => session.api.getTenant() })
  const [clientId, setClientId] = useState('')
  const [clientSecret, setClientSecret] = useState('')
  const store = useMutation({
    mutationFn: () => session.api.setIdpCredentials({ body: { clientId, clientSecret } }),
    onSuccess: () => {
      setClientSecret('')
      void queries.invalidateQueries({ queryKey: ['tenant'] })
    },
  })
  const remove = useMutation({
    mutationFn: () => session.api.deleteIdpCredentials(),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['tenant'] }),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    store.mutate()
  }
  const t = tenant.data
  return (
    <>
      <ErrorText error={tenant.error ?? store.error ?? remove.error} />
      {t && (
        <p role="status">
          {t.hasIdpClientSecret
            ? `Client ${t.idpClientId} is stored; sign-in through the provider is ${t.idpOauthEnabled ? 'on' : 'off'}.`
            : 'No credentials are stored.'}
        </p>
      )}
      <form className="settings" onSubmit={submit}>
        <label htmlFor="idp-client">Client ID</label>
        <input
          id="idp-client"
          value={clientId}
          onChange={(e) => setClientId(e.target.value)}
          required
          maxLength={512}
        />
        <label htmlFor="idp-secret">Client secret</label>
        <input
          id="idp-secret"
          type="password"
          autoComplete="off"
          value={clientSecret}
          onChange={(e) => setClientSecret(e.target.value)}
          required
          maxLength={512}
        />
        <button type="submit" className="primary" disabled={store.isPending}>
          Save credentials
        </button>
      </form>
      {t?.hasIdpClientSecret && (
        <ConfirmButton
          label="Remove credentials"
          danger
          confirm="Turn the provider sign-in off?"
          onConfirm={() => remove.mutate()}
        />
      )}
    </>
  )
}
