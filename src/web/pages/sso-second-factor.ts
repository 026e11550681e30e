// The second factor after a federated sign-in (CONTRACT §12, "mfaPolicy applies after SSO
// unless mfaSatisfied"; federation/pending-mfa.ts): the SSO callback or SAML ACS linked the
// identity, stored a pending sign-in and sent the browser here with its cookie. The page asks
// for the authenticator's code (or a recovery code); the right one starts the session
// (`amr` fed + otp + mfa) and goes where the sign-in was going: the OpenID authorization it
// serves, else the account page. No cookie, another browser's, used or expired: the page
// says to sign in again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../lib/errors.ts'
import {
  finishPendingSignIn,
  openPendingSignIn,
  pendingCookie,
} from '../../modules/federation/pending-mfa.ts'
import type { Pages } from '../context.ts'
import { html, raw } from '../html.ts'
import { clearCookie, formText, readCookies } from '../http.ts'
import { codeField, errorSummary, type FormErrors, field, form, hidden, notice } from '../layout.ts'
import {
  beginSession,
  interactionPath,
  keepDeviceToken,
  pendingInteractionUid,
} from '../session.ts'
import { type Req, rememberDeviceBox, rememberDeviceTicked } from './flow.ts'

const PATH = 'sign-in/sso/second-factor'

const pendingId = (pages: Pages, request: FastifyRequest) =>
  readCookies(request)[pendingCookie(pages.deps.config.publicUrl, request.tenant.slug).name]

function forgetPending(pages: Pages, request: FastifyRequest, reply: FastifyReply) {
  const { name, ...where } = pendingCookie(pages.deps.config.publicUrl, request.tenant.slug)
  clearCookie(reply, name, where)
}

function codePage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { errors?: FormErrors; status?: number } = {},
) {
  const csrf = pages.csrf(request, reply)
  const action = pages.url(request, PATH)
  const t = pages.t(request, reply)
  const body = html`<h1>${t('secondFactor.heading')}</h1>
${notice(t('sso.secondFactorIntro'))}
${errorSummary(state.errors, t)}
${form(action, csrf, html`${hidden('method', 'totp')}${codeField('totpCode', t('secondFactor.totpLabel'), state.errors)}${rememberDeviceBox(request, t, 'remember-totp')}`, t('common.continue'))}
<details${state.errors?.fields?.recoveryCode ? raw(' open') : ''}><summary>${t('secondFactor.useRecovery')}</summary>
${form(action, csrf, html`${hidden('method', 'recovery')}${field({ name: 'recoveryCode', label: t('secondFactor.recoveryLabel'), autocomplete: 'off', errors: state.errors })}${rememberDeviceBox(request, t, 'remember-recovery')}`, t('secondFactor.recoverySubmit'))}
</details>
<p><a href="${pages.url(request, 'sign-in')}">${t('secondFactor.startAgain')}</a></p>`
  return pages.send(request, reply, t('secondFactor.title'), body, { status: state.status })
}

function expiredPage(pages: Pages, request: FastifyRequest, reply: FastifyReply) {
  forgetPending(pages, request, reply)
  const t = pages.t(request, reply)
  const body = html`<h1>${t('logout.signInAgain')}</h1>
<div class="error-summary" role="alert"><p>${t('sso.stale')}</p></div>
<p><a class="button" href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>
<p class="hint">${t('oidcError.code', { code: 'invalid_state' })}</p>`
  return pages.send(request, reply, t('oidcError.title'), body, { status: 400 })
}

export function ssoSecondFactorRoutes(app: FastifyInstance, pages: Pages, deps: Deps): void {
  app.get(`/${PATH}`, async (request, reply) => {
    const pending = await openPendingSignIn(deps, request.tenant.id, pendingId(pages, request))
    if (!pending) return expiredPage(pages, request, reply)
    return codePage(pages, request, reply)
  })

  app.post(`/${PATH}`, async (request: Req, reply) => {
    const { tenant } = request
    const method = formText(request.body, 'method')
    const input = {
      ...(method === 'recovery'
        ? { recoveryCode: formText(request.body, 'recoveryCode') }
        : { totpCode: formText(request.body, 'totpCode') }),
      rememberDevice: rememberDeviceTicked(request.body),
    }
    let done: Awaited<ReturnType<typeof finishPendingSignIn>>
    try {
      done = await finishPendingSignIn(
        deps,
        tenant,
        pendingId(pages, request),
        input,
        request.actor,
      )
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error
      if (error.reason === 'invalid_state') return expiredPage(pages, request, reply)
      const target = method === 'recovery' ? 'recoveryCode' : 'totpCode'
      const t = pages.t(request, reply)
      const errors: FormErrors =
        error.reason === 'invalid_mfa_code'
          ? { fields: { [target]: t('sso.wrongCode') } }
          : error.status === 429
            ? { form: t('sso.tooMany') }
            : { form: t('sso.refusal.invalid_credentials') }
      return codePage(pages, request, reply, { errors, status: error.status })
    }
    forgetPending(pages, request, reply)
    const { envelope, amr } = done
    if (done.deviceToken) {
      keepDeviceToken(pages.ctx(request), reply, done.deviceToken, tenant.mfaRememberDays)
    }
    // The SSO flow noted the interaction; the idp's callback could not see it on http.
    const interaction = done.interaction ?? pendingInteractionUid(pages.ctx(request), request)
    beginSession(pages.ctx(request), request, reply, {
      accessToken: envelope.accessToken,
      refreshToken: envelope.refreshToken,
      expiresAt: Date.now() + envelope.accessTokenExpiresIn * 1000,
      amr,
      interaction,
    })
    if (interaction)
      return pages.continueTo(request, reply, interactionPath(tenant.slug, interaction))
    return pages.redirect(request, reply, 'account')
  })
}
