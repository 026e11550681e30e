// Social sign-in (CONTRACT §19): the workspace's social connections in the order of their
// buttons on the hosted sign-in page, and "Add a provider": a choice among the providers,
// then the form for the one chosen (#social?add=github). #social?id=<id> opens one
// connection (SocialConnection.tsx), where a new one lands to show its callback URL.
import { useQuery } from '@tanstack/react-query'
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import { useCreate } from './record.tsx'
import { SocialConnectionPage } from './SocialConnection.tsx'
import {
  PROVIDERS,
  type Provider,
  providerName,
  SocialConnectionForm,
} from './SocialConnectionForm.tsx'
import { ErrorText, hashQuery, Table } from './ui.tsx'

type Connection = Schemas['SocialConnection']

export function SocialConnections() {
  const query = hashQuery()
  const id = query.get('id')
  const add = PROVIDERS.find((p) => p.value === query.get('add'))?.value
  if (id) return <SocialConnectionPage id={id} />
  return add ? <AddConnection provider={add} /> : <ConnectionList />
}

/**
 * Every connection, in the buttons' order: ascending `order`, then oldest first. The API
 * pages them oldest first, so all pages are read before sorting (a workspace has a few).
 */
export function useSocialConnections() {
  const { session } = useConsole()
  return useQuery({
    queryKey: ['social'],
    queryFn: async () => {
      const all: Connection[] = []
      let cursor: string | undefined
      do {
        const page = await session.api.listSocialConnections({ query: { limit: 200, cursor } })
        all.push(...page.items)
        cursor = page.nextCursor ?? undefined
      } while (cursor)
      // A stable sort keeps the API's oldest-first order among equal orders.
      return all.sort((a, b) => a.order - b.order)
    },
  })
}

const yesNo = (on: boolean) => (on ? 'Yes' : 'No')

function ConnectionList() {
  const list = useSocialConnections()
  const items = list.data ?? []
  return (
    <>
      <p className="hint intro">
        A social connection puts a “Continue with …” button for one provider (Google, GitHub, …) on
        the workspace’s sign-in page: people sign in with their account there, through an OAuth app
        you register at the provider. Their first sign-in makes an account here, or joins the one
        with the same verified address.
      </p>
      <ErrorText error={list.error} />
      {list.isSuccess && items.length === 0 && (
        <p>No social connections yet: add a provider below.</p>
      )}
      {items.length > 0 && (
        <>
          <Table
            className="cards"
            caption="Social connections"
            columns={['Name', 'Provider', 'Enabled', 'Order']}
          >
            {items.map((c) => (
              <tr key={c.id}>
                <td data-label="Name">
                  <a href={`#social?id=${encodeURIComponent(c.id)}`}>{c.name}</a>
                </td>
                <td data-label="Provider">{providerName(c.provider)}</td>
                <td data-label="Enabled">{yesNo(c.enabled)}</td>
                <td data-label="Order">{c.order}</td>
              </tr>
            ))}
          </Table>
          <p className="hint">
            The sign-in page shows the enabled ones in this order: by Order, then oldest first.
          </p>
        </>
      )}
      <section aria-labelledby="add-social-h">
        <h2 id="add-social-h">Add a provider</h2>
        <ul className="providers" aria-labelledby="add-social-h">
          {PROVIDERS.map((p) => (
            <li key={p.value}>
              <a className="provider-tile" href={`#social?add=${p.value}`}>
                <span className="provider-name">{p.name}</span>
                <span className="provider-where">{p.where}</span>
              </a>
            </li>
          ))}
        </ul>
      </section>
    </>
  )
}

function AddConnection({ provider }: { provider: Provider }) {
  const { session } = useConsole()
  const chosen = PROVIDERS.find((p) => p.value === provider)
  const create = useCreate('social', async (body) => {
    const created = await session.api.createSocialConnection({ body: body as never })
    return { id: created.connection.id }
  })
  return (
    <>
      <p>
        <a href="#social">All connections and providers</a>
      </p>
      <section aria-labelledby="new-social-h">
        <h2 id="new-social-h">Add {chosen?.name}</h2>
        <p className="hint">{chosen?.where}</p>
        <p className="hint intro">
          The app there asks for a callback URL: this connection’s is shown once it is added. If the
          provider needs one first, give it any address and change it after.
        </p>
        <SocialConnectionForm
          provider={provider}
          submitLabel="Add connection"
          {...formOf(create)}
        />
      </section>
    </>
  )
}
