// The account page itself: profile, password, authenticator app and recovery codes, live
// sessions, connected apps (connected-apps.ts), passkeys, personal data, closing the
// account, each section a form that posts to its own path (account.ts). Drawn again with
// the errors of a refused form, or with a notice after a done one.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { describeUserAgent } from '../../lib/user-agent.ts'
import type { Pages } from '../context.ts'
import { html, raw } from '../html.ts'
import { errorSummary, type FormErrors, field, form, notice } from '../layout.ts'
import type { PageSession } from '../session.ts'
import { type ConnectedApp, connectedAppsSection } from './connected-apps.ts'

export interface Me {
  email: string
  role: string
  status: string
  createdAt: string
  totpEnrolled: boolean
  emailVerified: boolean
  tenant?: { name: string }
}

interface Passkey {
  id: string
  name: string
  createdAt: string
  lastUsedAt: string | null
}

/** The notice after each action, by the `done` of its redirect. */
export const NOTES: Record<string, string> = {
  password: 'Your password is changed. Your other sessions were signed out.',
  totp: 'Your authenticator app is set up.',
  passkey: 'Your passkey is added. You can sign in with it.',
  reset: 'Your new password is set. Every other session was signed out.',
  verified: 'Your email address is verified.',
  'session-ended': 'That session is signed out.',
  'passkey-removed': 'The passkey is removed.',
  confirmed: "Thank you, that's confirmed.",
  'app-revoked': 'The app can no longer use your account. It has to ask you again.',
}

/**
 * The account page. `addPasskey` (the name typed, possibly empty) comes back from "Confirm
 * it's you" and starts the passkey ceremony the person asked for (pages.js).
 */
export async function accountPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  state: { note?: string; errors?: FormErrors; status?: number; addPasskey?: string } = {},
): Promise<FastifyReply> {
  const api = pages.api(request, session.accessToken)
  const [me, keys, live, connected] = await Promise.all([
    api.getMe(),
    api.listPasskeys(),
    api.listMySessions({ query: { limit: 50 } }),
    api.listMyApplications(),
  ])
  const passkeys = (keys as { items: Passkey[] }).items
  const sessions = live.items
  const csrf = pages.csrf(request, reply)
  const apps = await connectedAppsSection(pages, request, connected.items as ConnectedApp[], csrf)
  const passwords = request.tenant.authPolicy !== 'PasswordlessOnly'
  // One Sign out, at the top beside the way to the console (for an admin, the workspace
  // filled in): the current device's row below has no button of its own.
  const body = html`<div class="account-head">
<h1>Your account</h1>
<div class="account-actions">
${me.permissions.length > 0 && html`<a href="/console/?tenant=${request.tenant.slug}" class="button">Admin console</a>`}
<form method="post" action="${pages.url(request, 'sign-out')}" class="sign-out">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign out</button>
</form>
</div>
</div>
${notice(state.note)}
${errorSummary(state.errors)}
<section aria-labelledby="profile-h">
<h2 id="profile-h">Profile</h2>
<dl class="facts">
<dt>Email address</dt><dd>${me.email} ${me.emailVerified ? html`<span class="tag ok">verified</span>` : html`<span class="tag">not verified</span>`}</dd>
<dt>Role</dt><dd>${me.role}</dd>
<dt>Member since</dt><dd><time datetime="${me.createdAt}">${me.createdAt.slice(0, 10)}</time></dd>
</dl>
${!me.emailVerified && form(pages.url(request, 'account/verify'), csrf, html``, 'Verify my email address')}
</section>
${
  passwords &&
  html`<section aria-labelledby="password-h">
<h2 id="password-h">Password</h2>
${form(
  pages.url(request, 'account/password'),
  csrf,
  html`<input type="text" name="username" value="${me.email}" autocomplete="username" hidden>
${field({ name: 'currentPassword', label: 'Current password', type: 'password', autocomplete: 'current-password', errors: state.errors })}
${field({ name: 'newPassword', label: 'New password', type: 'password', autocomplete: 'new-password', hint: 'At least 12 characters. Your other sessions will be signed out.', errors: state.errors })}`,
  'Change password',
)}
</section>`
}
<section aria-labelledby="mfa-h">
<h2 id="mfa-h">Two-step verification</h2>
${
  me.totpEnrolled
    ? html`<p>An authenticator app protects your sign-ins.</p>`
    : html`<p>Add an authenticator app so that a password alone cannot sign in to your account.</p>
${form(pages.url(request, 'account/totp'), csrf, html``, 'Set up an authenticator app')}`
}
</section>
${
  me.totpEnrolled &&
  html`<section aria-labelledby="recovery-h">
<h2 id="recovery-h">Recovery codes</h2>
<p>Each recovery code signs you in once if you lose your authenticator app. Making new ones voids the old ones.</p>
${form(
  pages.url(request, 'account/recovery-codes'),
  csrf,
  field({
    name: 'regenerateTotp',
    label: 'Code from your authenticator app',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    errors: state.errors,
  }),
  'Make new recovery codes',
)}
</section>`
}
<section aria-labelledby="sessions-h">
<h2 id="sessions-h">Where you are signed in</h2>
<ul class="items">${sessions.map(
    (
      s,
    ) => html`<li><span><strong>${describeUserAgent(s.userAgent)}</strong>${s.current ? html` <span class="tag ok">this device</span>` : ''}<br><span class="hint">${s.ip ?? 'unknown address'}, last active ${s.lastUsedAt.slice(0, 16).replace('T', ' ')} UTC</span></span>
${s.current ? '' : html`<form method="post" action="${pages.url(request, `account/sessions/${s.id}/end`)}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="End session: ${describeUserAgent(s.userAgent)} at ${s.ip ?? 'an unknown address'}">End session</button></form>`}</li>`,
  )}</ul>
</section>
${apps}
<section aria-labelledby="data-h">
<h2 id="data-h">Your data</h2>
<p>Download everything this workspace holds about you, as a JSON file.</p>
<form method="post" action="${pages.url(request, 'account/export')}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Download my data</button></form>
</section>
<section aria-labelledby="passkeys-h">
<h2 id="passkeys-h">Passkeys</h2>
${
  passkeys.length === 0
    ? html`<p>No passkeys yet. A passkey signs you in with your device's screen lock instead of a password.</p>`
    : html`<ul class="items passkeys">${passkeys.map(
        (
          p,
        ) => html`<li><span><strong>${p.name}</strong><br><span class="hint">Added ${p.createdAt.slice(0, 10)}${p.lastUsedAt ? html`, last used ${p.lastUsedAt.slice(0, 10)}` : ''}</span></span>
<form method="post" action="${pages.url(request, `account/passkeys/${p.id}/delete`)}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="Remove passkey ${p.name}">Remove</button></form></li>`,
      )}</ul>`
}
${
  request.tenant.passkeysEnabled &&
  html`<div class="passkey" data-passkey="register" data-base="${pages.url(request).slice(0, -1)}" data-csrf="${csrf}"${state.addPasskey !== undefined ? raw(' data-autostart') : ''} hidden>
<label for="passkey-name">Name for a new passkey (optional)</label>
<input id="passkey-name" name="passkey-name" type="text" maxlength="100" autocomplete="off"${state.addPasskey ? html` value="${state.addPasskey}"` : ''}>
<button type="button">Add a passkey</button>
<p class="passkey-status" data-passkey-status role="status" aria-live="polite"></p>
</div>`
}
</section>
<section aria-labelledby="delete-h">
<h2 id="delete-h">Close your account</h2>
<p>This deletes your account in this workspace. You will be signed out everywhere.</p>
${form(
  pages.url(request, 'account/delete'),
  csrf,
  field({
    name: 'confirm',
    label: 'Type DELETE to confirm',
    autocomplete: 'off',
    errors: state.errors,
  }),
  'Delete my account',
  { danger: true },
)}
</section>`
  return pages.send(request, reply, 'Your account', body, { status: state.status, wide: true })
}
