// The sign-in page: each way to sign in that the tenant allows (a password, an emailed
// code, a passkey, its identity provider), and why the last try did not work.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { tenantHasSso } from '../../modules/federation/service.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { emailField, errorSummary, type FormErrors, field, form, notice } from '../layout.ts'
import { codesAllowed, passwordsAllowed } from './flow.ts'

export async function signInPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { email?: string; errors?: FormErrors; note?: string; status?: number } = {},
) {
  const tenant = request.tenant
  const csrf = pages.csrf(request, reply)
  const sso = await tenantHasSso(pages.deps, tenant.id)
  const body = html`<h1>Sign in to ${tenant.name}</h1>
${notice(state.note)}
${errorSummary(state.errors)}
${
  passwordsAllowed(tenant) &&
  form(
    pages.url(request, 'sign-in'),
    csrf,
    html`${emailField(state.email, state.errors)}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', errors: state.errors })}`,
    'Sign in',
  )
}
${
  tenant.idpOauthEnabled &&
  html`<p><a class="button" href="${pages.url(request, 'sign-in/idp')}">Sign in with your organisation's account</a></p>`
}
${sso && html`<p><a class="button" href="${pages.url(request, 'sign-in/sso')}">Sign in with SSO</a></p>`}
${
  tenant.passkeysEnabled &&
  html`<div class="passkey" data-passkey="sign-in" data-base="${pages.url(request).slice(0, -1)}" data-csrf="${csrf}" hidden>
<button type="button">Sign in with a passkey</button>
<p class="passkey-status" data-passkey-status role="status" aria-live="polite"></p>
</div>`
}
<nav class="alternatives" aria-label="Other ways to sign in">
<ul>
${codesAllowed(tenant) && html`<li><a href="${pages.url(request, 'sign-in/code')}">Email me a sign-in code</a></li>`}
${passwordsAllowed(tenant) && html`<li><a href="${pages.url(request, 'reset-password')}">Forgot your password?</a></li>`}
${passwordsAllowed(tenant) && html`<li><a href="${pages.url(request, 'sign-up')}">Create an account</a></li>`}
</ul>
</nav>`
  return pages.send(request, reply, 'Sign in', body, { status: state.status })
}
