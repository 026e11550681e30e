// Blocking hooks (CONTRACT §21): the workspace's hooks, at most one per event, with what
// each is asked for, its endpoint, whether it is enabled, how long a sign-in waits for it
// and what a failure means; and a form to register one for an event that has none.
// #hooks?id=<id> opens one hook (Hook.tsx); a new one opens there with its signing secret,
// handed over in memory so that it is shown once.
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { HookPage } from './Hook.tsx'
import { EVENTS, eventLabel, failureText, HookForm } from './HookForm.tsx'
import { useCreate } from './record.tsx'
import { ErrorText, hashQuery, MoreButton, Table, usePages } from './ui.tsx'

type Hook = Schemas['Hook']

export function Hooks() {
  const id = hashQuery().get('id')
  return id ? <HookPage id={id} /> : <HookList />
}

function HookList() {
  const { session } = useConsole()
  const list = usePages<Hook>(['hooks'], (cursor) =>
    session.api.listHooks({ query: { limit: 50, cursor } }),
  )
  const create = useCreate('hooks', async (body) => {
    const created = await session.api.createHook({ body: body as never })
    return { id: created.hook.id, secret: created.secret }
  })
  const free = EVENTS.map((e) => e.event).filter((e) => !list.items.some((h) => h.event === e))
  return (
    <>
      <p className="hint intro">
        Endpoints the service calls, and waits for, during a sign-up, a sign-in or the minting of an
        access token: signed HTTP POSTs (Standard Webhooks) whose answer may refuse the sign-in or
        add claims. One hook per event.
      </p>
      <ErrorText error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && (
        <p>No hooks yet: register the first one below.</p>
      )}
      {list.items.length > 0 && (
        <Table
          className="cards"
          caption="Hooks"
          columns={['Event', 'Endpoint', 'State', 'Timeout', 'On failure']}
        >
          {list.items.map((hook) => (
            <tr key={hook.id}>
              <td data-label="Event">
                <a href={`#hooks?id=${encodeURIComponent(hook.id)}`}>{eventLabel(hook.event)}</a>
                <div className="hint">
                  <code>{hook.event}</code>
                </div>
              </td>
              <td data-label="Endpoint" className="hook-url">
                {hook.url}
              </td>
              <td data-label="State">{hook.enabled ? 'Enabled' : 'Disabled'}</td>
              <td data-label="Timeout">{hook.timeoutMs} ms</td>
              <td data-label="On failure">
                {failureText(hook.event, hook.onFailure)} ({hook.onFailure})
              </td>
            </tr>
          ))}
        </Table>
      )}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} more={list.more} />
      {!list.loading && !list.error && (
        <section aria-labelledby="new-hook-h">
          <h2 id="new-hook-h">New hook</h2>
          {free.length === 0 ? (
            <p>Every event has its hook: change or delete one to use another endpoint.</p>
          ) : (
            <HookForm
              key={free.join()}
              events={free}
              submitLabel="Create hook"
              {...formOf(create)}
            />
          )}
        </section>
      )}
    </>
  )
}
