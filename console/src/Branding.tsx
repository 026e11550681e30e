// The tenant's branding (CONTRACT §20): the colours, dark mode, the dark logo and favicon,
// the tenant's CSS and the privacy, terms and support links of its hosted pages and mails;
// saved on its own with PATCH tenant `branding` ("Remove branding" sends null). The service
// refuses a primary colour too light for white button text (insufficient_contrast) and CSS
// that could load from elsewhere; the refusal is shown under the form.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { Fragment, useEffect, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { submitted } from './fields.tsx'
import { ErrorText } from './ui.tsx'

type Tenant = Schemas['Tenant']
type DarkMode = 'auto' | 'light' | 'dark'

const TEXT_FIELDS = [
  ['darkLogoUrl', 'Logo on dark pages (https URL)', 'url'],
  ['faviconUrl', 'Favicon (https URL)', 'url'],
  ['privacyPolicyUrl', 'Privacy policy (https URL)', 'url'],
  ['termsUrl', 'Terms (https URL)', 'url'],
  ['supportEmail', 'Support email address', 'email'],
] as const
type TextField = (typeof TEXT_FIELDS)[number][0]

export function Branding({ tenant }: { tenant: Tenant }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const stored = tenant.branding
  const initial = () => ({
    primaryColor: stored?.primaryColor ?? '#1f4fd1',
    backgroundColor: stored?.backgroundColor ?? '',
    darkMode: (stored?.darkMode ?? 'auto') as DarkMode,
    customCss: stored?.customCss ?? '',
    ...Object.fromEntries(TEXT_FIELDS.map(([key]) => [key, stored?.[key] ?? ''])),
  })
  const [draft, setDraft] = useState<Record<string, string>>(initial)
  // biome-ignore lint/correctness/useExhaustiveDependencies: the draft follows what is stored.
  useEffect(() => setDraft(initial()), [stored])
  const set = (key: string, value: string) => setDraft({ ...draft, [key]: value })
  const save = useMutation({
    mutationFn: (remove: boolean) => {
      const optional = (key: string) => (draft[key] ? { [key]: draft[key] } : {})
      const branding = remove
        ? null
        : {
            primaryColor: draft.primaryColor,
            darkMode: draft.darkMode as DarkMode,
            ...optional('backgroundColor'),
            ...optional('customCss'),
            ...Object.assign({}, ...TEXT_FIELDS.map(([key]) => optional(key as TextField))),
          }
      return session.api.updateTenant({ body: { branding } })
    },
    onSuccess: (updated) => queries.setQueryData(['tenant'], updated),
  })
  const submit = submitted(() => save.mutate(false))
  return (
    <section className="logo-section" aria-labelledby="branding-h">
      <h2 id="branding-h">Branding</h2>
      <form className="settings" onSubmit={submit}>
        <label htmlFor="brand-primary">Buttons and links colour</label>
        <input
          id="brand-primary"
          type="color"
          value={draft.primaryColor}
          aria-describedby="brand-primary-hint"
          onChange={(e) => set('primaryColor', e.target.value)}
        />
        <p className="hint" id="brand-primary-hint">
          Button text is white: the colour needs a contrast of at least 4.5:1 with it.
        </p>
        <label htmlFor="brand-background">Page background in light mode</label>
        <input
          id="brand-background"
          type="color"
          value={draft.backgroundColor || '#f4f5f8'}
          onChange={(e) => set('backgroundColor', e.target.value)}
        />
        <label htmlFor="brand-dark">Dark mode</label>
        <select
          id="brand-dark"
          value={draft.darkMode}
          onChange={(e) => set('darkMode', e.target.value)}
        >
          <option value="auto">As the browser prefers</option>
          <option value="light">Always light</option>
          <option value="dark">Always dark</option>
        </select>
        {TEXT_FIELDS.map(([key, label, type]) => (
          <Fragment key={key}>
            <label htmlFor={`brand-${key}`}>{label}</label>
            <input
              id={`brand-${key}`}
              type={type}
              value={draft[key]}
              maxLength={2048}
              onChange={(e) => set(key, e.target.value)}
            />
          </Fragment>
        ))}
        <label htmlFor="brand-css">Custom CSS</label>
        <textarea
          id="brand-css"
          rows={6}
          value={draft.customCss}
          maxLength={32 * 1024}
          aria-describedby="brand-css-hint"
          onChange={(e) => set('customCss', e.target.value)}
        />
        <p className="hint" id="brand-css-hint">
          Added after the pages' own styles, at most 32 KiB; no @import, no url() other than
          data:image/, no escapes.
        </p>
        <ErrorText error={save.error} />
        {save.isSuccess && <p role="status">Branding saved.</p>}
        <div className="actions">
          <button type="submit" className="primary" disabled={save.isPending}>
            Save branding
          </button>
          {stored && (
            <button type="button" disabled={save.isPending} onClick={() => save.mutate(true)}>
              Remove branding
            </button>
          )}
        </div>
      </form>
    </section>
  )
}
