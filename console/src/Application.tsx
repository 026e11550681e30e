// One application (CONTRACT §11): what a developer needs to connect it (issuer, discovery
// URL, client id, quick starts), its secret once (after creation or rotation: the service
// keeps it sealed and never answers it again), its settings, and deletion.
import { useMutation, useQuery } from '@tanstack/react-query'
import { ApplicationForm, TYPES } from './ApplicationForm.tsx'
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { DeleteButton, SettingsSection, useRecord } from './record.tsx'
import { SamlFacts } from './SamlApplication.tsx'
import { quickStarts } from './snippets.ts'
import {
  ConfirmButton,
  CopyableFact,
  CopyButton,
  ErrorText,
  formatDate,
  SecretOnce,
  useHandedOverSecret,
} from './ui.tsx'

type Application = Schemas['Application']

/** The issuer as the service names it (its PUBLIC_URL), read from the discovery document. */
function useIssuer(tenant: string): string {
  const discovery = useQuery({
    queryKey: ['discovery', tenant],
    queryFn: async () => {
      const res = await fetch(
        `/oidc/${encodeURIComponent(tenant)}/.well-known/openid-configuration`,
      )
      if (!res.ok) throw new Error(`discovery answered ${res.status}`)
      return (await res.json()) as { issuer: string }
    },
    staleTime: Number.POSITIVE_INFINITY,
  })
  return discovery.data?.issuer ?? `${window.location.origin}/oidc/${tenant}`
}

export function ApplicationPage({ id }: { id: string }) {
  const { session, tenant } = useConsole()
  const [secret, setSecret] = useHandedOverSecret(`applications/${id}`)
  const { record, update, remove } = useRecord<Application>({
    area: 'applications',
    id,
    read: async () => (await session.api.getApplication({ path: { id } })).application,
    update: async (body) =>
      (await session.api.updateApplication({ path: { id }, body: body as never })).application,
    remove: () => session.api.deleteApplication({ path: { id } }),
  })
  const issuer = useIssuer(tenant)
  const rotate = useMutation({
    mutationFn: () => session.api.rotateApplicationSecret({ path: { id } }),
    onSuccess: (rotated) => setSecret(rotated.clientSecret),
  })
  const a = record.data
  return (
    <>
      <p>
        <a href="#applications">All applications</a>
      </p>
      <ErrorText error={record.error ?? rotate.error ?? remove.error} />
      {a && (
        <>
          <h2>{a.name}</h2>
          {secret && (
            <SecretOnce
              secret={secret}
              what="client secret"
              testId="client-secret"
              onDone={() => setSecret('')}
            >
              Rotate it if it is lost.
            </SecretOnce>
          )}
          {a.type === 'saml' ? (
            <SamlFacts app={a} publicUrl={issuer.replace(/\/oidc\/[^/]+$/, '')} tenant={tenant} />
          ) : (
            <Facts app={a} issuer={issuer} />
          )}
          <div className="row">
            {(a.type === 'web' || a.type === 'machine') && (
              <ConfirmButton
                label="Rotate secret"
                confirm="The current secret stops working at once. Rotate?"
                onConfirm={() => rotate.mutate()}
              />
            )}
            <DeleteButton
              label="Delete application"
              confirm={`Delete ${a.name} and sign out everyone using it?`}
              remove={remove}
            />
          </div>
          <SettingsSection id="app-settings-h" saved={update.isSuccess}>
            <ApplicationForm
              key={a.updatedAt}
              initial={a}
              submitLabel="Save application"
              {...formOf(update)}
            />
          </SettingsSection>
          {a.type !== 'saml' && <QuickStarts app={a} issuer={issuer} />}
        </>
      )}
    </>
  )
}

function Facts({ app, issuer }: { app: Application; issuer: string }) {
  const discovery = `${issuer}/.well-known/openid-configuration`
  const copyable: [string, string][] = [
    ['Client ID', app.clientId],
    ['Issuer', issuer],
    ['Discovery URL', discovery],
  ]
  return (
    <dl className="facts app-facts">
      <dt>Type</dt>
      <dd>{TYPES.find(([value]) => value === app.type)?.[1] ?? app.type}</dd>
      {copyable.map(([label, value]) => (
        <CopyableFact key={label} label={label} value={value} what={label.toLowerCase()} />
      ))}
      <dt>Client authentication</dt>
      <dd>
        <code>{app.tokenEndpointAuthMethod}</code>
        {app.profile === 'fapi2' ? ' · FAPI 2.0' : ''}
        {app.requirePushedAuthorizationRequests ? ' · PAR required' : ''}
        {app.requireDpop ? ' · DPoP required' : ''}
        {app.tokenExchange ? ' · token exchange' : ''}
      </dd>
      <dt>Created</dt>
      <dd>{formatDate(app.createdAt)}</dd>
    </dl>
  )
}

function QuickStarts({ app, issuer }: { app: Application; issuer: string }) {
  const { session, tenant } = useConsole()
  const resources = useQuery({
    queryKey: ['resources', 'first-page'],
    queryFn: () => session.api.listApiResources({ query: { limit: 200 } }),
    enabled: app.type === 'machine',
  })
  const starts = quickStarts({ app, issuer, tenant, resources: resources.data?.items ?? [] })
  return (
    <section aria-labelledby="quick-start-h">
      <h2 id="quick-start-h">Quick start</h2>
      {starts.map((start, i) => (
        <section className="snippet" key={start.title} aria-labelledby={`snippet-${i}`}>
          <h3 id={`snippet-${i}`}>{start.title}</h3>
          {/* Scrolls sideways on a phone rather than wrap: a wrapped line of code or of
              Apache's configuration reads as two. Focusable, so the keyboard scrolls it. */}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region */}
          <pre tabIndex={0}>
            <code>{start.code}</code>
          </pre>
          <CopyButton text={start.code} what={start.title} />
        </section>
      ))}
    </section>
  )
}
