// The signed-in user's account page and its forms: profile, password, authenticator app
// and recovery codes, live sessions, passkeys, personal data, closing the account. Each
// section is a form that posts to its own path and comes back here with a notice (303),
// so a reload never repeats an action.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { describeUserAgent } from '../../lib/user-agent.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { type Form, formText } from '../http.ts'
import { codeField, errorSummary, type FormErrors, field, form, notice } from '../layout.ts'
import { formErrors } from '../messages.ts'
import type { PageSession } from '../session.ts'
import { expiredForm, recoveryCodesPage, statusOf, totpFigure } from './signin.ts'

type Req = FastifyRequest<{ Body: Form; Querystring: Record<string, string> }>

interface Me {
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

const NOTES: Record<string, string> = {
  password: 'Your password is changed. Your other sessions were signed out.',
  totp: 'Your authenticator app is set up.',
  passkey: 'Your passkey is added. You can sign in with it.',
  reset: 'Your new password is set. Every other session was signed out.',
  verified: 'Your email address is verified.',
  'session-ended': 'That session is signed out.',
  'passkey-removed': 'The passkey is removed.',
}

export function accountRoutes(app: FastifyInstance, pages: Pages): void {
  /** The session, or a redirect to the sign-in page. */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await pages.session(request, reply)
    if (!session) pages.redirect(request, reply, 'sign-in')
    return session
  }

  const accountPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    session: PageSession,
    state: { note?: string; errors?: FormErrors; status?: number } = {},
  ) => {
    const api = pages.api(request, session.accessToken)
    const [me, keys, live] = await Promise.all([
      api.getMe(),
      api.listPasskeys(),
      api.listMySessions({ query: { limit: 50 } }),
    ])
    const passkeys = (keys as { items: Passkey[] }).items
    const sessions = live.items
    const csrf = pages.csrf(request, reply)
    const passwords = request.tenant.authPolicy !== 'PasswordlessOnly'
    const body = html`<h1>Your account</h1>
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
<form method="post" action="${pages.url(request, `account/sessions/${s.id}/end`)}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" aria-label="Sign out ${s.current ? 'this device' : `${describeUserAgent(s.userAgent)} at ${s.ip ?? 'an unknown address'}`}">Sign out</button></form></li>`,
    )}</ul>
</section>
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
  html`<div class="passkey" data-passkey="register" data-base="${pages.url(request).slice(0, -1)}" data-csrf="${csrf}" hidden>
<label for="passkey-name">Name for a new passkey (optional)</label>
<input id="passkey-name" name="passkey-name" type="text" maxlength="100" autocomplete="off">
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
</section>
<form method="post" action="${pages.url(request, 'sign-out')}" class="sign-out">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign out</button>
</form>`
    return pages.send(request, reply, 'Your account', body, { status: state.status, wide: true })
  }

  app.get('/account', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    return accountPage(request, reply, session, { note: NOTES[request.query.done ?? ''] })
  })

  app.post('/account/password', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      await pages.api(request, session.accessToken).changePassword({
        body: {
          currentPassword: formText(request.body, 'currentPassword'),
          newPassword: formText(request.body, 'newPassword'),
        },
      })
      return pages.redirect(request, reply, 'account?done=password')
    } catch (error) {
      const errors = formErrors(error, { password: 'newPassword' })
      if (errors.form === 'The email address or password is not right.') {
        errors.form = undefined
        errors.fields = { currentPassword: 'Your current password is not right.' }
      }
      return accountPage(request, reply, session, { errors, status: statusOf(error) })
    }
  })

  const enrolPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    email: string,
    secret: string,
    errors?: FormErrors,
  ) => {
    const body = html`<h1>Set up an authenticator app</h1>
<p>Scan the code with an authenticator app, or type the key, then enter the 6-digit code it shows.</p>
${await totpFigure(request.tenant.name, email, secret)}
${errorSummary(errors)}
${form(
  pages.url(request, 'account/totp/verify'),
  pages.csrf(request, reply),
  html`<input type="hidden" name="secret" value="${secret}">
${codeField('code', 'Code from the app', errors)}`,
  'Confirm',
)}
<p><a href="${pages.url(request, 'account')}">Cancel</a></p>`
    return pages.send(request, reply, 'Set up an authenticator', body)
  }

  app.post('/account/totp', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      const api = pages.api(request, session.accessToken)
      const enrolment = await api.enrollTotp()
      const me = (await api.getMe()) as Me
      return enrolPage(request, reply, me.email, enrolment.secret)
    } catch (error) {
      return accountPage(request, reply, session, {
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  app.post('/account/totp/verify', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    const api = pages.api(request, session.accessToken)
    try {
      const answer = (await api.verifyTotp({
        body: { code: formText(request.body, 'code') },
      })) as { recoveryCodes?: string[] }
      if (answer.recoveryCodes)
        return recoveryCodesPage(pages, request, reply, answer.recoveryCodes)
      return pages.redirect(request, reply, 'account?done=totp')
    } catch (error) {
      // The key comes back as the user posted it (their own; escaped, and drawn as a QR code
      // only when it is a base32 key).
      const me = (await api.getMe()) as Me
      const errors = formErrors(error, { totpCode: 'code' })
      return enrolPage(request, reply, me.email, formText(request.body, 'secret'), errors)
    }
  })

  app.post(
    '/account/sessions/:id/end',
    async (request: FastifyRequest<{ Params: { id: string }; Body: Form }>, reply) => {
      if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
      const session = await signedIn(request, reply)
      if (!session) return reply
      const api = pages.api(request, session.accessToken)
      const live = await api.listMySessions({ query: { limit: 50 } })
      const current = live.items.find((s) => s.current)?.id === request.params.id
      try {
        await api.endMySession({ path: { id: request.params.id } })
      } catch {
        // Already ended, or not this user's: the page shows what is live.
      }
      if (current) {
        pages.endSession(request, reply)
        return pages.redirect(request, reply, 'sign-in')
      }
      return pages.redirect(request, reply, 'account?done=session-ended')
    },
  )

  app.post('/account/recovery-codes', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      const answer = await pages.api(request, session.accessToken).regenerateRecoveryCodes({
        body: { totpCode: formText(request.body, 'regenerateTotp') },
      })
      return recoveryCodesPage(pages, request, reply, answer.recoveryCodes)
    } catch (error) {
      const errors = formErrors(error, { totpCode: 'regenerateTotp' })
      return accountPage(request, reply, session, { errors, status: statusOf(error) })
    }
  })

  app.post('/account/export', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      const data = await pages.api(request, session.accessToken).exportPersonalData()
      return reply
        .header('cache-control', 'no-store')
        .header('content-disposition', 'attachment; filename="my-data.json"')
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(data, null, 2))
    } catch (error) {
      return accountPage(request, reply, session, {
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  app.post('/account/verify', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      await pages.api(request, session.accessToken).requestEmailVerification({ body: {} })
    } catch (error) {
      return accountPage(request, reply, session, {
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
    return verifyOwnPage(request, reply)
  })

  const verifyOwnPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    errors?: FormErrors,
  ) => {
    const body = html`<h1>Verify your email address</h1>
${notice('We emailed you a 6-digit code. It works for 10 minutes.')}
${errorSummary(errors)}
${form(
  pages.url(request, 'account/verify/confirm'),
  pages.csrf(request, reply),
  codeField('code', '6-digit code from the email', errors),
  'Verify',
)}
<p><a href="${pages.url(request, 'account')}">Back to your account</a></p>`
    return pages.send(request, reply, 'Verify your email', body, { status: errors ? 401 : 200 })
  }

  app.post('/account/verify/confirm', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      await pages
        .api(request, session.accessToken)
        .verifyEmail({ body: { code: formText(request.body, 'code') } })
      return pages.redirect(request, reply, 'account?done=verified')
    } catch (error) {
      return verifyOwnPage(request, reply, formErrors(error))
    }
  })

  app.post('/account/delete', async (request: Req, reply) => {
    if (!pages.csrfValid(request)) return expiredForm(pages, request, reply)
    const session = await signedIn(request, reply)
    if (!session) return reply
    if (formText(request.body, 'confirm') !== 'DELETE') {
      return accountPage(request, reply, session, {
        errors: { fields: { confirm: 'Type DELETE, in capitals, to confirm.' } },
        status: 400,
      })
    }
    try {
      await pages.api(request, session.accessToken).deleteMe()
    } catch (error) {
      return accountPage(request, reply, session, {
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
    pages.endSession(request, reply)
    return pages.send(
      request,
      reply,
      'Account deleted',
      html`<h1>Your account is deleted</h1><p>You are signed out everywhere.</p>`,
    )
  })
}
