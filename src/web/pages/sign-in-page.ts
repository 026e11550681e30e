// The sign-in page: each way to sign in that the tenant allows (a password, an emailed
// code, a passkey, its identity provider, its social connections), and why the last try did not work.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { tenantHasSso } from '../../modules/federation/service.ts'
import { captchaWidget, pageCaptcha } from '../captcha.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { emailField, errorSummary, type FormErrors, field, form, notice } from '../layout.ts'
import { codesAllowed, passwordsAllowed } from './flow.ts'
import { socialButtons } from './social-sign-in.ts'

/** The link to the emailed sign-in, worded for what it sends (CONTRACT §20). */
const EMAILED_SIGN_IN = {
  code: 'signIn.code',
  link: 'signIn.link',
  both: 'signIn.codeOrLink',
} as const

export async function signInPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { email?: string; errors?: FormErrors; note?: string; status?: number } = {},
) {
  const tenant = request.tenant
  const csrf = pages.csrf(request, reply)
  const t = pages.t(request, reply)
  const sso = await tenantHasSso(pages.deps, tenant.id)
  const social = await socialButtons(pages, request)
  const body = html`<h1>${t('signIn.heading', { tenant: tenant.name })}</h1>
${notice(state.note)}
${errorSummary(state.errors, t)}
${
  passwordsAllowed(tenant) &&
  form(
    pages.url(request, 'sign-in'),
    csrf,
    html`${emailField(state.email, state.errors, t)}
${field({ name: 'password', label: t('signIn.password'), type: 'password', autocomplete: 'current-password', errors: state.errors })}
${captchaWidget(request, 'sign_in', t)}`,
    t('signIn.submit'),
  )
}
${
  tenant.idpOauthEnabled &&
  html`<p><a class="button" href="${pages.url(request, 'sign-in/idp')}">${t('signIn.idp')}</a></p>`
}
${social}
${sso && html`<p><a class="button" href="${pages.url(request, 'sign-in/sso')}">${t('signIn.sso')}</a></p>`}
${
  tenant.passkeysEnabled &&
  html`<div class="passkey" data-passkey="sign-in" data-base="${pages.url(request).slice(0, -1)}" data-csrf="${csrf}" data-cancelled="${t('passkey.cancelled')}" data-failed="${t('errors.reason.other')}" hidden>
<button type="button">${t('signIn.passkey')}</button>
<p class="passkey-status" data-passkey-status role="status" aria-live="polite"></p>
</div>`
}
<nav class="alternatives" aria-label="${t('signIn.alternatives')}">
<ul>
${codesAllowed(tenant) && html`<li><a href="${pages.url(request, 'sign-in/code')}">${t(EMAILED_SIGN_IN[tenant.passwordlessMethod as keyof typeof EMAILED_SIGN_IN])}</a></li>`}
${passwordsAllowed(tenant) && html`<li><a href="${pages.url(request, 'reset-password')}">${t('signIn.forgot')}</a></li>`}
${passwordsAllowed(tenant) && html`<li><a href="${pages.url(request, 'sign-up')}">${t('signIn.signUp')}</a></li>`}
</ul>
</nav>`
  return pages.send(request, reply, t('signIn.title'), body, {
    status: state.status,
    captcha: passwordsAllowed(tenant) ? pageCaptcha(request, 'sign_in') : undefined,
  })
}
