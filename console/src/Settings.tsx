// Settings: every policy of the tenant in one form (PATCH tenant sends what changed), a
// dry run of the drafted sign-in policies before they are saved (CONTRACT §21), and the
// logo with a preview before it is uploaded; the CAPTCHA (Captcha.tsx) is saved on its own.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type ChangeEvent, useEffect, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { Branding } from './Branding.tsx'
import { Captcha } from './Captcha.tsx'
import { submitted } from './fields.tsx'
import { changedFrom, ErrorText, localeName } from './ui.tsx'

type Tenant = Schemas['Tenant']
type Editable = Pick<
  Tenant,
  | 'name'
  | 'mfaPolicy'
  | 'authPolicy'
  | 'passwordlessJitSignup'
  | 'passwordlessMethod'
  | 'idpOauthEnabled'
  | 'requireVerifiedEmail'
  | 'securityNotifications'
  | 'passkeysEnabled'
  | 'dynamicClientRegistration'
  | 'defaultLocale'
  | 'locales'
  | 'breachedPasswordPolicy'
  | 'mfaRememberDays'
>

/**
 * The locales the service has catalogues for (src/i18n/locales/, CONTRACT §20), each named
 * in its own language; the service refuses any other.
 */
const SUPPORTED_LOCALES = ['en', 'ar', 'de', 'es', 'fr', 'it', 'ja', 'ko', 'nl', 'pt-BR', 'zh-CN']

const FLAGS: [keyof Editable, string][] = [
  ['passwordlessJitSignup', 'Emailed codes create an account for a new address'],
  ['idpOauthEnabled', 'Sign-in through the identity provider'],
  ['requireVerifiedEmail', 'Password sign-in needs a verified email address'],
  ['securityNotifications', 'Security alert emails to users'],
  ['passkeysEnabled', 'Passkeys'],
  [
    'dynamicClientRegistration',
    'Applications may register themselves (OpenID dynamic registration)',
  ],
]

export function Settings() {
  const { session } = useConsole()
  const queries = useQueryClient()
  const tenant = useQuery({ queryKey: ['tenant'], queryFn: () => session.api.getTenant() })
  const [draft, setDraft] = useState<Editable | null>(null)
  useEffect(() => {
    if (tenant.data) setDraft(pick(tenant.data))
  }, [tenant.data])
  const save = useMutation({
    mutationFn: (patch: Partial<Editable>) =>
      // The locales are the service's own (SUPPORTED_LOCALES); it refuses any other.
      session.api.updateTenant({ body: patch as never }),
    onSuccess: (updated) => queries.setQueryData(['tenant'], updated),
  })
  if (!draft || !tenant.data) return <ErrorText error={tenant.error} />
  const stored = pick(tenant.data)
  const submit = submitted(() => save.mutate(changedFrom(draft, stored)))
  const set = <K extends keyof Editable>(key: K, value: Editable[K]) =>
    setDraft({ ...draft, [key]: value })
  return (
    <>
      <form className="settings" onSubmit={submit}>
        <label htmlFor="tenant-name">Workspace name</label>
        <input
          id="tenant-name"
          value={draft.name}
          maxLength={120}
          onChange={(e) => set('name', e.target.value)}
        />
        <label htmlFor="auth-policy">How users sign in</label>
        <select
          id="auth-policy"
          value={draft.authPolicy}
          onChange={(e) => set('authPolicy', e.target.value as Editable['authPolicy'])}
        >
          <option value="PasswordOnly">Password only</option>
          <option value="PasswordAndPasswordless">Password or emailed code</option>
          <option value="PasswordlessOnly">Emailed code only</option>
        </select>
        <label htmlFor="passwordless-method">What the emailed sign-in sends</label>
        <select
          id="passwordless-method"
          value={draft.passwordlessMethod}
          aria-describedby="passwordless-method-hint"
          onChange={(e) =>
            set('passwordlessMethod', e.target.value as Editable['passwordlessMethod'])
          }
        >
          <option value="code">A 6-digit code</option>
          <option value="link">A sign-in link</option>
          <option value="both">The user chooses a code or a link</option>
        </select>
        <p className="hint" id="passwordless-method-hint">
          On the hosted pages, where emailed sign-in is allowed. A link works once, within 15
          minutes, in the browser that asked; opened elsewhere it shows the code to type there.
        </p>
        <label htmlFor="mfa-policy">Second factor</label>
        <select
          id="mfa-policy"
          value={draft.mfaPolicy}
          onChange={(e) => set('mfaPolicy', e.target.value as Editable['mfaPolicy'])}
        >
          <option value="Disabled">Disabled</option>
          <option value="Optional">Optional (users who set one up)</option>
          <option value="Required">Required for everyone</option>
        </select>
        <label htmlFor="remember-days">Remember devices (days)</label>
        <input
          id="remember-days"
          type="number"
          min={0}
          max={90}
          step={1}
          value={draft.mfaRememberDays}
          aria-describedby="remember-days-hint"
          onChange={(e) => set('mfaRememberDays', Number(e.target.value))}
        />
        <p className="hint" id="remember-days-hint">
          After a second factor, that browser or app skips it for this many days; 0 remembers none
          and forgets every remembered device of the workspace.
        </p>
        <label htmlFor="breached-policy">Passwords found in breaches</label>
        <select
          id="breached-policy"
          value={draft.breachedPasswordPolicy}
          onChange={(e) =>
            set('breachedPasswordPolicy', e.target.value as Editable['breachedPasswordPolicy'])
          }
        >
          <option value="block">Refused when chosen; a sign-in with one asks for a new one</option>
          <option value="off">Not checked</option>
        </select>
        <fieldset>
          <legend>Options</legend>
          {FLAGS.map(([key, label]) => (
            <div className="check" key={key}>
              <input
                type="checkbox"
                id={`flag-${key}`}
                checked={draft[key] as boolean}
                onChange={(e) => set(key, e.target.checked as never)}
              />
              <label htmlFor={`flag-${key}`}>{label}</label>
            </div>
          ))}
        </fieldset>
        <fieldset>
          <legend>Languages of the sign-in pages and emails</legend>
          {SUPPORTED_LOCALES.map((l) => (
            <div className="check" key={l}>
              <input
                type="checkbox"
                id={`locale-${l}`}
                checked={draft.locales.includes(l)}
                onChange={(e) =>
                  set(
                    'locales',
                    SUPPORTED_LOCALES.filter((x) =>
                      x === l ? e.target.checked : draft.locales.includes(x),
                    ),
                  )
                }
              />
              <label htmlFor={`locale-${l}`} lang={l}>
                {localeName(l)}
              </label>
            </div>
          ))}
          <label htmlFor="default-locale">Default language</label>
          <select
            id="default-locale"
            value={draft.defaultLocale}
            onChange={(e) => set('defaultLocale', e.target.value)}
          >
            {draft.locales.map((l) => (
              <option key={l} value={l} lang={l}>
                {localeName(l)}
              </option>
            ))}
          </select>
        </fieldset>
        <DryRun draft={draft} />
        <ErrorText error={save.error} />
        {save.isSuccess && <p role="status">Saved.</p>}
        <button type="submit" className="primary" disabled={save.isPending}>
          Save settings
        </button>
      </form>
      <Captcha tenant={tenant.data} />
      <Branding tenant={tenant.data} />
      <Logo current={tenant.data.logoUrl} />
    </>
  )
}

const OUTCOMES: Record<string, string> = {
  blocked: 'Blocked',
  second_factor_needed: 'Asked a second factor',
  sso_redirect: 'Sent to SSO',
  password_change_needed: 'Asked a new password',
}

/** What the drafted sign-in policies would do to the last 30 days' sign-ins; saves nothing. */
function DryRun({ draft }: { draft: Editable }) {
  const { session } = useConsole()
  const run = useMutation({
    mutationFn: () =>
      session.api.dryRunPolicy({
        body: {
          mfaPolicy: draft.mfaPolicy,
          authPolicy: draft.authPolicy,
          requireVerifiedEmail: draft.requireVerifiedEmail,
          breachedPasswordPolicy: draft.breachedPasswordPolicy,
        },
      }),
  })
  return (
    <section className="dry-run" aria-labelledby="dry-run-h">
      <h2 id="dry-run-h">Before saving</h2>
      <button type="button" disabled={run.isPending} onClick={() => run.mutate()}>
        Preview the effect on the last 30 days
      </button>
      <ErrorText error={run.error} />
      {run.data && (
        <div role="status">
          <p>
            {run.data.signIns} sign-ins by {run.data.users} users;{' '}
            {run.data.affected.length === 0
              ? 'none of them would be affected.'
              : `${run.data.affected.length} would be affected:`}
          </p>
          {run.data.affected.length > 0 && (
            <ul>
              {run.data.affected.map((a) => (
                <li key={a.userId}>
                  {a.email}: {OUTCOMES[a.outcome] ?? a.outcome} (<code>{a.reason}</code>)
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  )
}

function pick(t: Tenant): Editable {
  const { name, mfaPolicy, authPolicy, passwordlessJitSignup, idpOauthEnabled } = t
  const { requireVerifiedEmail, securityNotifications, passkeysEnabled } = t
  const { dynamicClientRegistration, defaultLocale, locales } = t
  const { breachedPasswordPolicy, mfaRememberDays, passwordlessMethod } = t
  return {
    name,
    mfaPolicy,
    authPolicy,
    passwordlessJitSignup,
    passwordlessMethod,
    idpOauthEnabled,
    requireVerifiedEmail,
    securityNotifications,
    passkeysEnabled,
    dynamicClientRegistration,
    defaultLocale,
    locales,
    breachedPasswordPolicy,
    mfaRememberDays,
  }
}

const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp']

function Logo({ current }: { current: string }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const [preview, setPreview] = useState<{ url: string; type: string; data: string } | null>(null)
  const [problem, setProblem] = useState('')
  const upload = useMutation({
    mutationFn: (file: { type: string; data: string }) =>
      session.api.setTenantLogo({ body: { mimeType: file.type as 'image/png', data: file.data } }),
    onSuccess: () => {
      setPreview(null)
      void queries.invalidateQueries({ queryKey: ['tenant'] })
    },
  })
  const remove = useMutation({
    mutationFn: () => session.api.deleteTenantLogo(),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['tenant'] }),
  })
  const choose = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0]
    setProblem('')
    if (!file) return
    if (!LOGO_TYPES.includes(file.type)) return setProblem('Choose a PNG, JPEG or WebP image.')
    if (file.size > 512 * 1024) return setProblem('The image must be at most 512 KiB.')
    const reader = new FileReader()
    reader.onload = () => {
      const url = String(reader.result)
      setPreview({ url, type: file.type, data: url.slice(url.indexOf(',') + 1) })
    }
    reader.readAsDataURL(file)
  }
  return (
    <section className="logo-section" aria-labelledby="logo-h">
      <h2 id="logo-h">Logo</h2>
      <div className="logos">
        {current && (
          <img src={`${current}?v=${Date.now()}`} alt="Current logo" className="logo-preview" />
        )}
        {preview && <img src={preview.url} alt="New logo preview" className="logo-preview" />}
      </div>
      <label htmlFor="logo-file">Choose an image (PNG, JPEG or WebP, at most 512 KiB)</label>
      <input id="logo-file" type="file" accept={LOGO_TYPES.join(',')} onChange={choose} />
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ErrorText error={upload.error ?? remove.error} />
      <div className="row">
        <button
          type="button"
          className="primary"
          disabled={!preview || upload.isPending}
          onClick={() => preview && upload.mutate(preview)}
        >
          Upload logo
        </button>
        {current && (
          <button type="button" onClick={() => remove.mutate()}>
            Remove logo
          </button>
        )}
      </div>
    </section>
  )
}
