// One social connection (CONTRACT §19): the callback URL to register at the provider, with a
// copy button; a test sign-in in a new tab (the hosted start page `/t/{slug}/social/{id}`,
// which goes to the provider); enable and disable; deletion; and its settings, order
// included.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { providerName, SocialConnectionForm } from './SocialConnectionForm.tsx'
import { ConfirmButton, CopyButton, ErrorText, formatDate } from './ui.tsx'

type Connection = Schemas['SocialConnection']

export function SocialConnectionPage({ id }: { id: string }) {
  const { session, tenant } = useConsole()
  const queries = useQueryClient()
  const key = ['social', id]
  const connection = useQuery({
    queryKey: key,
    queryFn: async () => (await session.api.getSocialConnection({ path: { id } })).connection,
  })
  const saved = (updated: { connection: Connection }) => {
    queries.setQueryData(key, updated.connection)
    void queries.invalidateQueries({ queryKey: ['social'], exact: true })
  }
  // Each save starts the form afresh from the record answered (a typed secret is cleared),
  // even when two saves share one updatedAt.
  const [saves, setSaves] = useState(0)
  const update = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      session.api.updateSocialConnection({ path: { id }, body: body as never }),
    onSuccess: (updated) => {
      saved(updated)
      setSaves((n) => n + 1)
    },
  })
  const toggle = useMutation({
    mutationFn: (enabled: boolean) =>
      session.api.updateSocialConnection({ path: { id }, body: { enabled } }),
    onSuccess: saved,
  })
  const remove = useMutation({
    mutationFn: () => session.api.deleteSocialConnection({ path: { id } }),
    onSuccess: () => {
      // The list loads afresh rather than show the deleted connection for a moment.
      queries.removeQueries({ queryKey: key })
      queries.removeQueries({ queryKey: ['social'], exact: true })
      window.location.hash = '#social'
    },
  })
  const c = connection.data
  const provider = c && providerName(c.provider)
  return (
    <>
      <p>
        <a href="#social">All connections</a>
      </p>
      <ErrorText error={connection.error ?? toggle.error ?? remove.error} />
      {c && (
        <>
          <h2 className="hook-url">{c.name}</h2>
          <dl className="facts app-facts">
            <dt>Provider</dt>
            <dd>{provider}</dd>
            <dt>State</dt>
            <dd>{c.enabled ? 'Enabled: its button is on the sign-in page' : 'Disabled'}</dd>
            <dt>Order</dt>
            <dd>{c.order}</dd>
            <dt>Created</dt>
            <dd>{formatDate(c.createdAt)}</dd>
          </dl>
          <div className="row">
            <button
              type="button"
              disabled={toggle.isPending}
              onClick={() => toggle.mutate(!c.enabled)}
            >
              {c.enabled ? 'Disable' : 'Enable'}
            </button>
            {c.enabled && (
              <a
                className="button-link"
                href={`/t/${encodeURIComponent(tenant)}/social/${encodeURIComponent(c.id)}`}
                target="_blank"
                rel="noopener noreferrer"
              >
                Test this connection
                <span className="visually-hidden"> (opens a new tab)</span>
              </a>
            )}
            <ConfirmButton
              label="Delete connection"
              danger
              confirm={`Delete ${c.name}? Its button goes, and its people sign in some other way after.`}
              onConfirm={() => remove.mutate()}
            />
          </div>
          <p className="hint">
            {c.enabled
              ? `Test this connection opens a new tab that goes to ${provider}; after you sign in there, it comes back signed in to the workspace’s hosted pages, as your people will.`
              : 'A disabled connection signs nobody in: enable it to test it.'}
          </p>
          <section aria-labelledby="social-register-h">
            <h2 id="social-register-h">Register at {provider}</h2>
            <p className="hint">
              Give this callback URL (also called redirect URI) to the app you made there, then make
              sure its client ID and secret are those below.
            </p>
            <dl className="facts app-facts">
              <dt>Callback URL</dt>
              <dd className="copyable">
                <code>{c.callbackUrl}</code>
                <CopyButton text={c.callbackUrl} what="Callback URL" />
              </dd>
            </dl>
          </section>
          <section aria-labelledby="social-settings-h">
            <h2 id="social-settings-h">Settings</h2>
            <SocialConnectionForm
              key={`${c.updatedAt}:${saves}`}
              provider={c.provider}
              initial={c}
              submitLabel="Save connection"
              pending={update.isPending}
              error={update.error}
              onSubmit={(body) => update.mutate(body)}
            />
            {update.isSuccess && <p role="status">Saved.</p>}
          </section>
        </>
      )}
    </>
  )
}
