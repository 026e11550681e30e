// One social connection (CONTRACT §19): the callback URL to register at the provider, with a
// copy button; a test sign-in in a new tab (the hosted start page `/t/{slug}/social/{id}`,
// which goes to the provider); enable and disable; deletion; and its settings, order
// included.
import { type Schemas, useConsole } from './api.ts'
import { formOf } from './fields.tsx'
import {
  DeleteButton,
  EnableButton,
  SettingsSection,
  TestConnectionLink,
  useRecord,
} from './record.tsx'
import { providerName, SocialConnectionForm } from './SocialConnectionForm.tsx'
import { CopyableFact, ErrorText, formatDate } from './ui.tsx'

type Connection = Schemas['SocialConnection']

export function SocialConnectionPage({ id }: { id: string }) {
  const { session, tenant } = useConsole()
  const { record, update, toggle, remove, saves } = useRecord<Connection>({
    area: 'social',
    id,
    read: async () => (await session.api.getSocialConnection({ path: { id } })).connection,
    update: async (body) =>
      (await session.api.updateSocialConnection({ path: { id }, body: body as never })).connection,
    remove: () => session.api.deleteSocialConnection({ path: { id } }),
    dropList: true,
  })
  const c = record.data
  const provider = c && providerName(c.provider)
  return (
    <>
      <p>
        <a href="#social">All connections</a>
      </p>
      <ErrorText error={record.error ?? toggle.error ?? remove.error} />
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
            <EnableButton enabled={c.enabled} toggle={toggle} />
            {c.enabled && (
              <TestConnectionLink
                href={`/t/${encodeURIComponent(tenant)}/social/${encodeURIComponent(c.id)}`}
              />
            )}
            <DeleteButton
              label="Delete connection"
              confirm={`Delete ${c.name}? Its button goes, and its people sign in some other way after.`}
              remove={remove}
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
              <CopyableFact label="Callback URL" value={c.callbackUrl} />
            </dl>
          </section>
          <SettingsSection id="social-settings-h" saved={update.isSuccess}>
            <SocialConnectionForm
              key={`${c.updatedAt}:${saves}`}
              provider={c.provider}
              initial={c}
              submitLabel="Save connection"
              {...formOf(update)}
            />
          </SettingsSection>
        </>
      )}
    </>
  )
}
