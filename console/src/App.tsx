// The console's shell: sign-in for an Admin (or a user whose custom roles grant some
// administration permission), then one panel per area open to them, chosen in the
// navigation and kept in the URL's hash (#users, #invites, …) so a reload stays put. A
// panel may take a query after its name (#audit?user=…, a user's events from their row).
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useEffect, useMemo, useState } from 'react'
import type { SessionClient, TokenEnvelope } from '../../sdk/src/session.ts'
import { ApiKeys } from './ApiKeys.tsx'
import { ApiResources } from './ApiResources.tsx'
import { Applications } from './Applications.tsx'
import { Audit } from './Audit.tsx'
import { AuthServiceError, Console, connect, describeError, useConsole } from './api.ts'
import { CaptchaUnsupported, signInCaptcha } from './captcha.ts'
import { SubmitButton, TextField } from './fields.tsx'
import { Groups } from './Groups.tsx'
import { Hooks } from './Hooks.tsx'
import { IdentityProvider } from './IdentityProvider.tsx'
import { Invites } from './Invites.tsx'
import { MailTemplates } from './MailTemplates.tsx'
import { Organizations } from './Organizations.tsx'
import { Roles } from './Roles.tsx'
import { Settings } from './Settings.tsx'
import { SocialConnections } from './SocialConnections.tsx'
import { SsoConnections } from './SsoConnections.tsx'
import { Users } from './Users.tsx'
import { ErrorText } from './ui.tsx'
import { Webhooks } from './Webhooks.tsx'

// Each area with the tenant permissions (CONTRACT §17) any one of which opens it: the
// navigation shows only the areas the signed-in user's /me `permissions` open (an Admin
// holds every one), so a user of a custom role sees what that role lets them do.
const AREAS = {
  users: ['Users', Users, ['users:read', 'users:write']],
  invites: ['Invites', Invites, ['invites:write']],
  keys: ['API keys', ApiKeys, ['apikeys:write']],
  roles: ['Roles', Roles, ['roles:write']],
  groups: ['Groups', Groups, ['users:read', 'users:write']],
  organizations: ['Organizations', Organizations, ['organizations:write']],
  applications: ['Applications', Applications, ['applications:write']],
  resources: ['API resources', ApiResources, ['applications:write']],
  webhooks: ['Webhooks', Webhooks, ['webhooks:write']],
  hooks: ['Hooks', Hooks, ['hooks:write']],
  sso: ['SSO', SsoConnections, ['connections:write']],
  social: ['Social sign-in', SocialConnections, ['connections:write']],
  // The page reads the tenant first (GET tenant needs tenant:read): tenant:write alone would
  // open a page that cannot load.
  settings: ['Settings', Settings, ['tenant:read']],
  emails: ['Mail templates', MailTemplates, ['tenant:write']],
  audit: ['Audit log', Audit, ['audit:read']],
  idp: ['Identity provider', IdentityProvider, ['tenant:write']],
} as const
type Area = keyof typeof AREAS

/**
 * The landing page's one-time handoff (`#handoff=…`, src/web/pages/console-handoff.ts),
 * taken once as the console loads and removed from the address and its history entry
 * before anything else runs, so it is never shown, bookmarked or sent on.
 */
const handoff = ((): string | undefined => {
  const match = /^#handoff=([^&]+)$/.exec(window.location.hash)
  if (!match?.[1]) return undefined
  window.history.replaceState(null, '', window.location.pathname + window.location.search)
  return decodeURIComponent(match[1])
})()

/** The console's session from the handoff code: the workspace's slug, or undefined when refused. */
async function takeHandoff(code: string): Promise<string | undefined> {
  const res = await fetch('/console/handoff', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  })
  if (!res.ok) return undefined
  const answer = (await res.json()) as { tenant: string; session: TokenEnvelope }
  await connect(answer.tenant).setSession(answer.session)
  return answer.tenant
}

/** Started once, as the module loads: a second exchange would spend the token again. */
const handedOff = handoff === undefined ? undefined : takeHandoff(handoff).catch(() => undefined)

/** The areas `permissions` open, in the navigation's order. */
const areasOf = (permissions: readonly string[]): Area[] =>
  (Object.keys(AREAS) as Area[]).filter((area) =>
    AREAS[area][2].some((p: string) => permissions.includes(p)),
  )

/** The area the hash names when it is open to the user, else the first that is. */
const areaOf = (hash: string, open: Area[]): Area | undefined => {
  const name = hash.replace(/^#/, '').split('?')[0] ?? ''
  return open.includes(name as Area) ? (name as Area) : open[0]
}

export function App() {
  const params = new URLSearchParams(window.location.search)
  const [tenant, setTenant] = useState(
    params.get('tenant') ?? window.sessionStorage.getItem('console:tenant') ?? '',
  )
  const [signedIn, setSignedIn] = useState(false)
  // A handoff is under way: its answer decides between the panels and the sign-in form.
  const [handingOff, setHandingOff] = useState(handoff !== undefined)
  const session = useMemo(() => (tenant ? connect(tenant) : undefined), [tenant])
  const queries = useQueryClient()

  useEffect(() => {
    if (handingOff) return
    let live = true
    session?.getSession().then((s) => live && setSignedIn(s !== null))
    return () => {
      live = false
    }
  }, [session, handingOff])

  useEffect(() => {
    handedOff
      ?.then((slug) => {
        if (!slug) return
        window.sessionStorage.setItem('console:tenant', slug)
        setTenant(slug)
        setSignedIn(true)
      })
      .finally(() => setHandingOff(false))
  }, [])

  if (handingOff) {
    return (
      <main className="sign-in">
        <h1>Admin console</h1>
        <p role="status">Signing you in…</p>
      </main>
    )
  }

  if (!session || !signedIn) {
    return (
      <SignIn
        tenant={tenant}
        onSignedIn={(slug) => {
          window.sessionStorage.setItem('console:tenant', slug)
          setTenant(slug)
          setSignedIn(true)
        }}
      />
    )
  }
  const signOut = () => {
    void session.logout().finally(() => {
      queries.clear()
      setSignedIn(false)
    })
  }
  return (
    <Console.Provider value={{ tenant, session, signOut }}>
      <Shell />
    </Console.Provider>
  )
}

function Shell() {
  const { session } = useConsole()
  const me = useQuery({ queryKey: ['me'], queryFn: () => session.api.getMe() })
  const [hash, setHash] = useState(window.location.hash)
  useEffect(() => {
    const onHash = () => setHash(window.location.hash)
    window.addEventListener('hashchange', onHash)
    return () => window.removeEventListener('hashchange', onHash)
  }, [])
  const open = areasOf(me.data?.permissions ?? [])
  const area = areaOf(hash, open)
  if (!me.data) {
    return (
      <div className="layout">
        <Header />
        <main className="panel">
          {me.error ? <ErrorText error={me.error} /> : <p role="status">Loading…</p>}
        </main>
      </div>
    )
  }
  return (
    <div className="layout">
      <Header />
      <nav className="areas" aria-label="Console">
        <ul>
          {open.map((key) => (
            <li key={key}>
              <a href={`#${key}`} aria-current={key === area ? 'page' : undefined}>
                {AREAS[key][0]}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main className="panel">
        {area ? <AreaPanel area={area} hash={hash} /> : <p>Your roles open no area here.</p>}
      </main>
    </div>
  )
}

function AreaPanel({ area, hash }: { area: Area; hash: string }) {
  const [title, Panel] = AREAS[area]
  return (
    <>
      <h1>{title}</h1>
      {/* A new query (another user's events) starts the panel afresh. */}
      <Panel key={hash} />
    </>
  )
}

function Header() {
  const { tenant, session, signOut } = useConsole()
  const me = useQuery({ queryKey: ['me'], queryFn: () => session.api.getMe() })
  const name = me.data?.tenant?.name ?? tenant
  return (
    <header className="top">
      <span className="workspace">{name}</span>
      <span className="who">{me.data?.email}</span>
      <button type="button" onClick={signOut}>
        Sign out
      </button>
    </header>
  )
}

interface SignInProps {
  tenant: string
  onSignedIn(slug: string): void
}

function SignIn({ tenant, onSignedIn }: SignInProps) {
  const [slug, setSlug] = useState(tenant)
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [totpCode, setTotpCode] = useState('')
  const [askTotp, setAskTotp] = useState(false)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)

  async function submit(event: FormEvent) {
    event.preventDefault()
    setBusy(true)
    setError('')
    const session: SessionClient = connect(slug.trim())
    try {
      // Each login call carries its own CAPTCHA answer where the workspace asks one.
      const captchaToken = await signInCaptcha(slug.trim())
      await session.login({ email, password, captchaToken, ...(askTotp ? { totpCode } : {}) })
      const me = await session.api.getMe()
      // An Admin, or a Member whose custom roles grant some administration permission.
      if (me.permissions.length === 0) {
        await session.logout()
        setError('This console is for administrators of the workspace.')
        return
      }
      onSignedIn(slug.trim())
    } catch (e) {
      if (e instanceof AuthServiceError && e.reason === 'mfa_required') {
        setAskTotp(true)
        setError(askTotp ? describeError(e) : '')
      } else {
        setError(e instanceof CaptchaUnsupported ? e.message : describeError(e))
      }
    } finally {
      setBusy(false)
    }
  }

  return (
    <main className="sign-in">
      <h1>Admin console</h1>
      <form onSubmit={submit}>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <TextField id="slug" label="Workspace" value={slug} onChange={setSlug} required />
        <TextField
          id="email"
          label="Email address"
          type="email"
          autoComplete="username"
          value={email}
          onChange={setEmail}
          required
        />
        <TextField
          id="password"
          label="Password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={setPassword}
          required
        />
        {askTotp && (
          <TextField
            id="totp"
            label="Code from your authenticator app"
            inputMode="numeric"
            autoComplete="one-time-code"
            value={totpCode}
            onChange={setTotpCode}
            required
          />
        )}
        <SubmitButton label="Sign in" pending={busy} />
      </form>
    </main>
  )
}
