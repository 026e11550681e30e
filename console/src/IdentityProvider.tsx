// The identity provider's OAuth client credentials: stored encrypted by the service, the
// secret never shown again; removing them turns the sign-in off.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { useConsole } from './api.ts'
import { SubmitButton, submitted, TextField } from './fields.tsx'
import { DeleteButton } from './record.tsx'
import { ErrorText } from './ui.tsx'

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
  const submit = submitted(() => store.mutate())
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
        <TextField
          id="idp-client"
          label="Client ID"
          value={clientId}
          onChange={setClientId}
          required
          maxLength={512}
        />
        <TextField
          id="idp-secret"
          label="Client secret"
          type="password"
          autoComplete="off"
          value={clientSecret}
          onChange={setClientSecret}
          required
          maxLength={512}
        />
        <SubmitButton label="Save credentials" pending={store.isPending} />
      </form>
      {t?.hasIdpClientSecret && (
        <DeleteButton
          label="Remove credentials"
          confirm="Turn the provider sign-in off?"
          remove={remove}
        />
      )}
    </>
  )
}
