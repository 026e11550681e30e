// One blocking hook (CONTRACT §21): its signing secret once (after registration: the service
// keeps it sealed and never answers it again), what it is asked for and what a failure
// means, enable and disable, "Send a test call" (a sample of its event, signed as a real
// one, whose outcome is shown here), its last calls (real and test, newest first), its
// settings and deletion.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { EVENTS, eventLabel, failureText, HookForm } from './HookForm.tsx'
import { DeleteButton, EnableButton, SettingsSection, useRecord } from './record.tsx'
import { ErrorText, formatDate, SecretOnce, Table, useHandedOverSecret } from './ui.tsx'

type Hook = Schemas['Hook']
type Outcome = Schemas['HookCall']['outcome']

const OUTCOMES: Record<Outcome, string> = {
  allow: 'Allowed',
  deny: 'Denied',
  timeout: 'Timed out',
  error: 'Failed',
}

export function OutcomeText({ outcome }: { outcome: Outcome }) {
  return <span className={`outcome-${outcome}`}>{OUTCOMES[outcome]}</span>
}

export function HookPage({ id }: { id: string }) {
  const { session } = useConsole()
  const [secret, setSecret] = useHandedOverSecret(`hooks/${id}`)
  const { record, update, toggle, remove } = useRecord<Hook>({
    area: 'hooks',
    id,
    read: async () => (await session.api.getHook({ path: { id } })).hook,
    update: async (body) =>
      (await session.api.updateHook({ path: { id }, body: body as never })).hook,
    remove: () => session.api.deleteHook({ path: { id } }),
  })
  const h = record.data
  return (
    <>
      <p>
        <a href="#hooks">All hooks</a>
      </p>
      <ErrorText error={record.error ?? toggle.error ?? remove.error} />
      {h && (
        <>
          <h2>
            {eventLabel(h.event)} <code>{h.event}</code>
          </h2>
          {secret && (
            <SecretOnce
              secret={secret}
              what="signing secret"
              testId="hook-secret"
              onDone={() => setSecret('')}
            >
              Your endpoint verifies each call's signature with it. If it is lost, delete the hook
              and register it again.
            </SecretOnce>
          )}
          <dl className="facts app-facts">
            <dt>When</dt>
            <dd>{EVENTS.find((e) => e.event === h.event)?.does}</dd>
            <dt>Endpoint</dt>
            <dd className="hook-url">{h.url}</dd>
            <dt>State</dt>
            <dd>{h.enabled ? 'Enabled' : 'Disabled'}</dd>
            <dt>Timeout</dt>
            <dd>{h.timeoutMs} ms</dd>
            <dt>On failure</dt>
            <dd>
              {failureText(h.event, h.onFailure)} ({h.onFailure})
            </dd>
            <dt>Created</dt>
            <dd>{formatDate(h.createdAt)}</dd>
          </dl>
          <div className="row">
            <EnableButton enabled={h.enabled} toggle={toggle} />
            <DeleteButton
              label="Delete hook"
              confirm="Delete this hook? Sign-ins stop asking it at once."
              remove={remove}
            />
          </div>
          <TestCall hook={h} />
          <Calls id={id} />
          <SettingsSection id="hook-settings-h" saved={update.isSuccess}>
            <HookForm key={h.updatedAt} initial={h} submitLabel="Save hook" {...formOf(update)} />
          </SettingsSection>
        </>
      )}
    </>
  )
}

/** "Send a test call" and what it came to, as the API answered it. */
function TestCall({ hook }: { hook: Hook }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const test = useMutation({
    mutationFn: () => session.api.testHook({ path: { id: hook.id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['hooks', hook.id, 'calls'] }),
  })
  const r = test.data
  const failed = r && (r.outcome === 'timeout' || r.outcome === 'error')
  return (
    <section aria-labelledby="hook-test-h">
      <h2 id="hook-test-h">Test call</h2>
      <p className="hint">
        Sends the endpoint a sample {hook.event} call, signed as a real one and marked{' '}
        <code>"test": true</code>, about no user (test.user@example.com). Nothing rides on the
        answer: no one signs in, nothing is recorded but the call below. A failure says what kind it
        was (no answer, an HTTP status, a name that does not resolve, a connection or TLS failure),
        never an address; ten test calls a minute for the workspace.
        {!hook.enabled && ' The hook is disabled: sign-ins do not call it, a test call does.'}
      </p>
      <div className="row">
        <button type="button" disabled={test.isPending} onClick={() => test.mutate()}>
          {test.isPending ? 'Calling…' : 'Send a test call'}
        </button>
      </div>
      <ErrorText error={test.error} />
      {r && (
        <div role="status" aria-label="Test call outcome">
          <dl className="facts app-facts">
            <dt>Outcome</dt>
            <dd>
              <OutcomeText outcome={r.outcome} />
            </dd>
            <dt>Response</dt>
            <dd>{r.status === undefined ? 'none' : `HTTP ${r.status}`}</dd>
            <dt>Duration</dt>
            <dd>{r.durationMs} ms</dd>
            {r.message !== undefined && (
              <>
                <dt>Message</dt>
                <dd>{r.message}</dd>
              </>
            )}
            {r.error !== undefined && (
              <>
                <dt>Error</dt>
                <dd className="last-error">{r.error}</dd>
              </>
            )}
            {r.claims !== undefined && (
              <>
                <dt>Claims</dt>
                <dd>
                  <pre className="mono claims">{JSON.stringify(r.claims, null, 2)}</pre>
                  {r.droppedClaims && (
                    <p className="hint">Reserved, dropped: {r.droppedClaims.join(', ')}</p>
                  )}
                </dd>
              </>
            )}
            {failed && (
              <>
                <dt>A real call</dt>
                <dd>
                  {failureText(hook.event, hook.onFailure)} (on failure: {hook.onFailure})
                </dd>
              </>
            )}
          </dl>
        </div>
      )}
    </section>
  )
}

/** The hook's last calls (GET hooks/{id}/calls): real and test, newest first, at most 20. */
function Calls({ id }: { id: string }) {
  const { session } = useConsole()
  const calls = useQuery({
    queryKey: ['hooks', id, 'calls'],
    queryFn: async () => (await session.api.listHookCalls({ path: { id } })).items,
  })
  const items = calls.data ?? []
  return (
    <section aria-labelledby="hook-calls-h">
      <h2 id="hook-calls-h">Last calls</h2>
      <p className="hint">
        The newest 20, real and test. Only when, the outcome, how long, the response code and why a
        call failed are kept: never what was sent or answered, nor who signed in.
      </p>
      <div className="row">
        <button type="button" disabled={calls.isFetching} onClick={() => calls.refetch()}>
          Refresh
        </button>
      </div>
      <ErrorText error={calls.error} />
      {calls.isSuccess && items.length === 0 && <p>No calls yet.</p>}
      {items.length > 0 && (
        <Table
          className="cards"
          caption="Last calls"
          columns={['When', 'Call', 'Outcome', 'Response', 'Duration', 'Error']}
        >
          {items.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the list is replaced whole, newest first
            <tr key={i}>
              <td data-label="When">{formatDate(c.at, true)}</td>
              <td data-label="Call">{c.test ? 'Test' : 'Real'}</td>
              <td data-label="Outcome">
                <OutcomeText outcome={c.outcome} />
              </td>
              <td data-label="Response">{c.status ?? '—'}</td>
              <td data-label="Duration">{c.durationMs} ms</td>
              <td data-label="Error">{c.error ?? '—'}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  )
}
