// What the sign-in flows share (password, emailed code, second factor, sign-up, invitation,
// reset, verification; passkeys.ts and the identity provider's hand-off too, through
// Pages.startSession): the one way a sign-in ends, and the pages and words they have in
// common. A flow carries nothing of the OpenID interaction it may serve: the interaction is
// remembered in its sealed cookie (session.ts) and read once, where the sign-in ends.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DEFAULT_LOCALE, type Translate, translator } from '../../i18n/index.ts'
import { otpauthUri, qrCodeSvg } from '../../modules/mfa/totp.ts'
import type { Tenant } from '../../modules/tenants/service.ts'
import { AuthServiceError } from '../api.ts'
import type { Pages, TokenEnvelope } from '../context.ts'
import { type Html, html, raw } from '../html.ts'
import type { Form } from '../http.ts'
import { codeField, type FormErrors } from '../layout.ts'
import { keepDeviceToken } from '../session.ts'
import { newPasswordPage } from './breached-password.ts'

export type Req = FastifyRequest<{ Body: Form; Querystring: Record<string, string> }>

export const passwordsAllowed = (t: Tenant) => t.authPolicy !== 'PasswordlessOnly'
export const codesAllowed = (t: Tenant) => t.authPolicy !== 'PasswordOnly'

/** A sign-in waiting for its second factor, sealed into its form (session.ts, `sealPending`). */
export interface Pending {
  email: string
  password?: string
  loginCode?: string
  /** The second factors the service offered (`details.methods` of mfa_required). */
  methods?: string[]
  until?: number
}

/**
 * Where every sign-in made with a form ends, proved by `amr` (RFC 8176): the page session
 * begins, and the browser goes back to the OpenID interaction it serves (through a page that
 * goes on by itself, Pages.continueTo), else by a 303 to `/t/{slug}/{rest}`. Recovery codes
 * the sign-in made (an authenticator set up on the way) are shown first; their button goes
 * on to the same place.
 */
export async function signedIn(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  envelope: unknown,
  amr: string[],
  rest = 'account',
  options: { password?: string } = {},
): Promise<FastifyReply> {
  const env = envelope as TokenEnvelope & { recoveryCodes?: string[]; deviceToken?: string }
  const interaction = pages.startSession(request, reply, env, amr)
  // CONTRACT §21: the browser asked to be remembered after its second factor.
  if (env.deviceToken) {
    keepDeviceToken(pages.ctx(request), reply, env.deviceToken, request.tenant.mfaRememberDays)
  }
  if (env.recoveryCodes) return recoveryCodesPage(pages, request, reply, env.recoveryCodes)
  // CONTRACT §21: a password found in a breach corpus is changed before going on.
  if (options.password !== undefined) {
    const me = await pages.api(request, env.accessToken).getMe()
    if (me.passwordBreached) {
      const next = interaction ?? pages.url(request, rest)
      return newPasswordPage(pages, request, reply, { password: options.password, next })
    }
  }
  return interaction
    ? pages.continueTo(request, reply, interaction)
    : pages.redirect(request, reply, rest)
}

export function recoveryCodesPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  codes: string[],
): Promise<FastifyReply> {
  const t = pages.t(request, reply)
  const body: Html = html`<h1>${t('recoveryCodes.heading')}</h1>
<p>${t('recoveryCodes.intro')}</p>
<ul class="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p><a class="button primary" href="${pages.afterSignIn(request, 'account')}">${t('recoveryCodes.saved')}</a></p>`
  return pages.send(request, reply, t('recoveryCodes.title'), body)
}

/**
 * The QR code and key of an authenticator being set up, drawn here from the secret (the
 * user's own, shown to them only), so no markup ever travels through a form.
 */
export async function totpFigure(
  tenantName: string,
  email: string,
  secret: string,
  t: Translate = translator(DEFAULT_LOCALE),
): Promise<Html> {
  const svg = /^[A-Z2-7]{16,128}$/.test(secret)
    ? await qrCodeSvg(otpauthUri(tenantName, email, secret))
    : ''
  return html`<figure class="qr">${svg && raw(svg)}<figcaption>${t('totp.key')} <code class="secret">${secret}</code></figcaption></figure>`
}

/** The field for a code mailed to the address (a reset, a verification). */
export const mailedCodeField = (t: Translate, errors?: FormErrors) =>
  codeField('code', t('code.mailedLabel'), errors)

export function statusOf(error: unknown): number {
  return error instanceof AuthServiceError ? error.status : 500
}

/**
 * CONTRACT §21: the second-factor forms' "remember this device" box, where the tenant
 * remembers devices (mfaRememberDays > 0); nothing otherwise.
 */
export function rememberDeviceBox(request: FastifyRequest, t: Translate, id: string): Html | '' {
  const days = request.tenant.mfaRememberDays
  if (!(days > 0)) return ''
  return html`<div class="check"><input type="checkbox" id="${id}" name="rememberDevice" value="on"><label for="${id}">${t('secondFactor.rememberDevice', { days: String(days) })}</label></div>`
}

/** Whether the form's "remember this device" box was ticked. */
export const rememberDeviceTicked = (body: Form | undefined): boolean =>
  body?.rememberDevice === 'on'
