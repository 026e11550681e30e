// The account page itself: profile, password (or a first one), authenticator app and recovery codes, live
// sessions, connected apps (connected-apps.ts), connected accounts (identities-section.ts), passkeys, personal data, closing the
// account, each section a form that posts to its own path (account.ts). Drawn again with
// the errors of a refused form, or with a notice after a done one.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { browserName, localDate, localDateTime } from '../../i18n/format.ts'
import { localeName, type MessageKey, type Translate } from '../../i18n/index.ts'
import { isAdminRole, MEMBER_ROLE } from '../../modules/roles/permissions.ts'
import type { Pages } from '../context.ts'
import { html, raw } from '../html.ts'
import { errorSummary, type FormErrors, field, form, notice } from '../layout.ts'
import type { PageSession } from '../session.ts'
import { type ConnectedApp, connectedAppsSection } from './connected-apps.ts'
import { type IdentityItem, identitiesSection } from './identities-section.ts'

export interface Me {
  email: string
  role: string
  status: string
  createdAt: string
  totpEnrolled: boolean
  emailVerified: boolean
  tenant?: { name: string }
  locale?: string | null
}

interface Passkey {
  id: string
  name: string
  createdAt: string
  lastUsedAt: string | null
}

/** The notice after each action, by the `done` of its redirect. */
export const NOTES: Record<string, MessageKey> = {
  password: 'account.note.password',
  'password-set': 'account.note.passwordSet',
  totp: 'account.note.totp',
  passkey: 'account.note.passkey',
  reset: 'account.note.reset',
  verified: 'account.note.verified',
  'session-ended': 'account.note.sessionEnded',
  'passkey-removed': 'account.note.passkeyRemoved',
  confirmed: 'account.note.confirmed',
  'app-revoked': 'account.note.appRevoked',
  language: 'account.note.language',
  'devices-forgotten': 'account.note.devicesForgotten',
  'identity-linked': 'account.note.identityLinked',
  'identity-removed': 'account.note.identityRemoved',
}

/**
 * The language form (CONTRACT §20): the user's `locale` among the tenant's, or none (the
 * pages then follow the browser). A locale the tenant no longer offers stays selectable
 * while it is the user's, so saving the form does not change it by accident.
 */
/** A role's name: the built-in roles in the page's language, a tenant's own as it named it. */
function roleName(t: Translate, role: string): string {
  if (isAdminRole(role)) return t('role.admin')
  if (role === MEMBER_ROLE) return t('role.member')
  return role
}

function languageSection(
  action: string,
  csrf: string,
  t: Translate,
  offered: readonly string[],
  current: string | null,
) {
  const choices = current && !offered.includes(current) ? [...offered, current] : offered
  return html`<section aria-labelledby="language-h">
<h2 id="language-h">${t('account.language')}</h2>
${form(
  action,
  csrf,
  html`<div class="field">
  <label for="locale">${t('account.languageLabel')}</label>
  <select id="locale" name="locale">
<option value=""${current ? '' : raw(' selected')}>${t('account.languageAuto')}</option>
${choices.map((l) => html`<option value="${l}" lang="${l}"${l === current ? raw(' selected') : ''}>${localeName(l)}</option>`)}
  </select>
</div>`,
  t('account.saveLanguage'),
)}
</section>`
}

/**
 * The password form: a change, with the current password; for an account without one (a
 * social connection, SSO or a code made it), a first password only (first-password.ts).
 */
function passwordSection(
  action: string,
  csrf: string,
  t: Translate,
  me: { email: string; hasPassword: boolean },
  errors: FormErrors | undefined,
) {
  const username = html`<input type="text" name="username" value="${me.email}" autocomplete="username" hidden>`
  const newPassword = field({
    name: 'newPassword',
    label: t('reset.newPassword'),
    type: 'password',
    autocomplete: 'new-password',
    hint: t('account.newPasswordHint'),
    errors,
  })
  if (!me.hasPassword) {
    return html`<section aria-labelledby="password-h">
<h2 id="password-h">${t('account.setPassword')}</h2>
<p>${t('account.setPasswordIntro')}</p>
${form(
  `${action}/set`,
  csrf,
  html`${username}
${newPassword}`,
  t('account.setPasswordSubmit'),
)}
</section>`
  }
  return html`<section aria-labelledby="password-h">
<h2 id="password-h">${t('account.password')}</h2>
${form(
  action,
  csrf,
  html`${username}
${field({ name: 'currentPassword', label: t('account.currentPassword'), type: 'password', autocomplete: 'current-password', errors })}
${newPassword}`,
  t('account.changePassword'),
)}
</section>`
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
  const [me, keys, live, connected, memberships, linked] = await Promise.all([
    api.getMe(),
    api.listPasskeys(),
    api.listMySessions({ query: { limit: 50 } }),
    api.listMyApplications(),
    api.listMyOrganizations(),
    api.listMyIdentities(),
  ])
  const passkeys = (keys as { items: Passkey[] }).items
  const sessions = live.items
  const csrf = pages.csrf(request, reply)
  const t = pages.t(request, reply)
  const locale = pages.locale(request, reply)
  const apps = await connectedAppsSection(pages, request, connected.items as ConnectedApp[], csrf)
  const identities = await identitiesSection(
    pages,
    request,
    reply,
    linked.items as IdentityItem[],
    csrf,
  )
  const passwords = request.tenant.authPolicy !== 'PasswordlessOnly'
  // One Sign out, at the top beside the way to the console (for an admin, the workspace
  // filled in): the current device's row below has no button of its own.
  const body = html`<div class="account-head">
<h1>${t('account.title')}</h1>
<div class="account-actions">
${me.permissions.length > 0 && html`<a href="/console/?tenant=${request.tenant.slug}" class="button">${t('account.console')}</a>`}
<form method="post" action="${pages.url(request, 'sign-out')}" class="sign-out">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">${t('account.signOut')}</button>
</form>
</div>
</div>
${notice(state.note)}
${errorSummary(state.errors, t)}
<section aria-labelledby="profile-h">
<h2 id="profile-h">${t('account.profile')}</h2>
<dl class="facts">
<dt>${t('layout.emailLabel')}</dt><dd>${me.email} ${me.emailVerified ? html`<span class="tag ok">${t('account.verified')}</span>` : html`<span class="tag">${t('account.notVerified')}</span>`}</dd>
<dt>${t('account.role')}</dt><dd>${roleName(t, me.role)}</dd>
<dt>${t('account.memberSince')}</dt><dd><time datetime="${me.createdAt}">${localDate(locale, me.createdAt)}</time></dd>
</dl>
${!me.emailVerified && form(pages.url(request, 'account/verify'), csrf, html``, t('account.verifyEmail'))}
</section>
${
  // CONTRACT §18: the organizations the user belongs to, shown when there are any.
  memberships.items.length > 0 &&
  html`<section aria-labelledby="organizations-h">
<h2 id="organizations-h">${t('account.organizations')}</h2>
<ul class="items">${memberships.items.map(
    (m) =>
      html`<li><span><strong>${m.name}</strong>${m.roles.length > 0 ? html`<br><span class="hint">${t('account.organizationRoles', { roles: m.roles.join(', ') })}</span>` : ''}</span></li>`,
  )}</ul>
</section>`
}
${languageSection(pages.url(request, 'account/locale'), csrf, t, pages.offered(request), me.locale ?? null)}
${passwords && passwordSection(pages.url(request, 'account/password'), csrf, t, me, state.errors)}
<section aria-labelledby="mfa-h">
<h2 id="mfa-h">${t('account.mfa')}</h2>
${
  me.totpEnrolled
    ? html`<p>${t('account.mfaOn')}</p>`
    : html`<p>${t('account.mfaOff')}</p>
${form(pages.url(request, 'account/totp'), csrf, html``, t('enrol.heading'))}`
}
</section>
${
  me.totpEnrolled &&
  html`<section aria-labelledby="recovery-h">
<h2 id="recovery-h">${t('recoveryCodes.title')}</h2>
<p>${t('account.recoveryIntro')}</p>
${form(
  pages.url(request, 'account/recovery-codes'),
  csrf,
  field({
    name: 'regenerateTotp',
    label: t('secondFactor.totpLabel'),
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    errors: state.errors,
  }),
  t('account.newRecoveryCodes'),
)}
</section>`
}
<section aria-labelledby="sessions-h">
<h2 id="sessions-h">${t('account.sessions')}</h2>
<ul class="items">${sessions.map(
    (
      s,
    ) => html`<li><span><strong>${browserName(t, s.userAgent)}</strong>${s.current ? html` <span class="tag ok">${t('account.thisDevice')}</span>` : ''}<br><span class="hint">${t('account.sessionSeen', { ip: s.ip ?? t('account.unknownAddress'), when: localDateTime(locale, s.lastUsedAt) })}</span></span>
${s.current ? '' : html`<form method="post" action="${pages.url(request, `account/sessions/${s.id}/end`)}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="${t('account.endSessionLabel', { agent: browserName(t, s.userAgent), ip: s.ip ?? t('account.anUnknownAddress') })}">${t('account.endSession')}</button></form>`}</li>`,
  )}</ul>
</section>
${
  request.tenant.mfaRememberDays > 0 &&
  html`<section aria-labelledby="devices-h">
<h2 id="devices-h">${t('account.devices')}</h2>
<p>${t('account.devicesIntro', { days: String(request.tenant.mfaRememberDays) })}</p>
<form method="post" action="${pages.url(request, 'account/forget-devices')}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">${t('account.forgetDevices')}</button></form>
</section>`
}
${apps}
<section aria-labelledby="data-h">
<h2 id="data-h">${t('account.data')}</h2>
<p>${t('account.dataIntro')}</p>
<form method="post" action="${pages.url(request, 'account/export')}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">${t('account.download')}</button></form>
</section>
${identities}
<section aria-labelledby="passkeys-h">
<h2 id="passkeys-h">${t('account.passkeys')}</h2>
${
  passkeys.length === 0
    ? html`<p>${t('account.noPasskeys')}</p>`
    : html`<ul class="items passkeys">${passkeys.map(
        (
          p,
        ) => html`<li><span><strong>${p.name}</strong><br><span class="hint">${p.lastUsedAt ? t('account.passkeyAddedUsed', { added: localDate(locale, p.createdAt), used: localDate(locale, p.lastUsedAt) }) : t('account.passkeyAdded', { added: localDate(locale, p.createdAt) })}</span></span>
<form method="post" action="${pages.url(request, `account/passkeys/${p.id}/delete`)}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="${t('account.removePasskeyLabel', { name: p.name })}">${t('account.remove')}</button></form></li>`,
      )}</ul>`
}
${
  request.tenant.passkeysEnabled &&
  html`<div class="passkey" data-passkey="register" data-base="${pages.url(request).slice(0, -1)}" data-csrf="${csrf}" data-cancelled="${t('passkey.cancelled')}" data-failed="${t('errors.reason.other')}"${state.addPasskey !== undefined ? raw(' data-autostart') : ''} hidden>
<label for="passkey-name">${t('account.passkeyName')}</label>
<input id="passkey-name" name="passkey-name" type="text" maxlength="100" autocomplete="off"${state.addPasskey ? html` value="${state.addPasskey}"` : ''}>
<button type="button">${t('account.addPasskey')}</button>
<p class="passkey-status" data-passkey-status role="status" aria-live="polite"></p>
</div>`
}
</section>
<section aria-labelledby="delete-h">
<h2 id="delete-h">${t('account.close')}</h2>
<p>${t('account.closeIntro')}</p>
${form(
  pages.url(request, 'account/delete'),
  csrf,
  field({
    name: 'confirm',
    label: t('account.deleteLabel', { word: 'DELETE' }),
    autocomplete: 'off',
    errors: state.errors,
  }),
  t('account.delete'),
  { danger: true },
)}
</section>`
  return pages.send(request, reply, t('account.title'), body, { status: state.status, wide: true })
}
