// The CAPTCHA of sign-up and sign-in (CONTRACT §21): the provider, its site key and secret
// (write-only: the field is empty and says whether one is stored), and the actions that ask
// for it; saved on its own with PATCH tenant `captcha`.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { type Schemas, useConsole } from './api.ts'
import { submitted } from './fields.tsx'
import { ErrorText } from './ui.tsx'

type Tenant = Schemas['Tenant']
type Provider = 'altcha' | 'turnstile' | 'hcaptcha' | 'recaptcha'
type Action = 'sign_up' | 'sign_in' | 'password_reset' | 'login_code'

const PROVIDERS: [Provider | '', string][] = [
  ['', 'Off'],
  ['altcha', 'ALTCHA (proof of work, served by this service)'],
  ['turnstile', 'Cloudflare Turnstile'],
  ['hcaptcha', 'hCaptcha'],
  ['recaptcha', 'Google reCAPTCHA'],
]

const ACTIONS: [Action, string][] = [
  ['sign_up', 'Sign-up'],
  ['sign_in', 'Password sign-in'],
  ['password_reset', 'Password reset request'],
  ['login_code', 'Emailed sign-in code request'],
]

export function Captcha({ tenant }: { tenant: Tenant }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const stored = tenant.captcha
  const [provider, setProvider] = useState<Provider | ''>(stored?.provider ?? '')
  const [siteKey, setSiteKey] = useState(stored?.siteKey ?? '')
  const [secret, setSecret] = useState('')
  const [on, setOn] = useState<Action[]>(stored?.on ?? ['sign_up'])
  const [minScore, setMinScore] = useState(String(stored?.minScore ?? 0.5))
  useEffect(() => {
    setProvider(stored?.provider ?? '')
    setSiteKey(stored?.siteKey ?? '')
    setOn(stored?.on ?? ['sign_up'])
    setMinScore(String(stored?.minScore ?? 0.5))
    setSecret('')
  }, [stored])
  const save = useMutation({
    mutationFn: () =>
      session.api.updateTenant({
        body: {
          captcha:
            provider === ''
              ? null
              : provider === 'altcha'
                ? { provider, on }
                : {
                    provider,
                    siteKey,
                    on,
                    ...(secret ? { secret } : {}),
                    ...(provider === 'recaptcha' ? { minScore: Number(minScore) } : {}),
                  },
        },
      }),
    onSuccess: (updated) => queries.setQueryData(['tenant'], updated),
  })
  const thirdParty = provider !== '' && provider !== 'altcha'
  const keptSecret = stored?.hasSecret && stored.provider === provider
  const submit = submitted(() => save.mutate())
  return (
    <section className="logo-section" aria-labelledby="captcha-h">
      <h2 id="captcha-h">CAPTCHA</h2>
      <form className="settings" onSubmit={submit}>
        <label htmlFor="captcha-provider">Provider</label>
        <select
          id="captcha-provider"
          value={provider}
          onChange={(e) => setProvider(e.target.value as Provider | '')}
        >
          {PROVIDERS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        {thirdParty && (
          <>
            <label htmlFor="captcha-site-key">Site key</label>
            <input
              id="captcha-site-key"
              value={siteKey}
              maxLength={200}
              onChange={(e) => setSiteKey(e.target.value)}
            />
            <label htmlFor="captcha-secret">Secret key</label>
            <input
              id="captcha-secret"
              type="password"
              autoComplete="off"
              value={secret}
              maxLength={500}
              aria-describedby="captcha-secret-hint"
              onChange={(e) => setSecret(e.target.value)}
            />
            <p className="hint" id="captcha-secret-hint">
              {keptSecret
                ? 'A secret is stored; leave this empty to keep it.'
                : 'Required; it is stored sealed and never shown again.'}
            </p>
          </>
        )}
        {provider === 'recaptcha' && (
          <>
            <label htmlFor="captcha-min-score">Lowest score let through (reCAPTCHA v3)</label>
            <input
              id="captcha-min-score"
              type="number"
              min={0}
              max={1}
              step={0.1}
              value={minScore}
              aria-describedby="captcha-min-score-hint"
              onChange={(e) => setMinScore(e.target.value)}
            />
            <p className="hint" id="captcha-min-score-hint">
              A v3 answer needs at least this score and the action of the call (sign_up, sign_in,
              password_reset, login_code); a v2 checkbox answer has no score.
            </p>
          </>
        )}
        {provider !== '' && (
          <fieldset>
            <legend>Ask for it at</legend>
            {ACTIONS.map(([action, label]) => (
              <div className="check" key={action}>
                <input
                  type="checkbox"
                  id={`captcha-on-${action}`}
                  checked={on.includes(action)}
                  onChange={(e) =>
                    setOn(
                      ACTIONS.map(([a]) => a).filter((a) =>
                        a === action ? e.target.checked : on.includes(a),
                      ),
                    )
                  }
                />
                <label htmlFor={`captcha-on-${action}`}>{label}</label>
              </div>
            ))}
            {on.includes('sign_in') && thirdParty && (
              <p className="hint">
                This console's own sign-in shows no third-party CAPTCHA: with password sign-in
                protected by it, administrators cannot sign in here with a password (ALTCHA the
                console solves by itself).
              </p>
            )}
          </fieldset>
        )}
        <ErrorText error={save.error} />
        {save.isSuccess && <p role="status">CAPTCHA saved.</p>}
        <button type="submit" className="primary" disabled={save.isPending}>
          Save CAPTCHA
        </button>
      </form>
    </section>
  )
}
