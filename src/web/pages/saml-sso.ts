// The hosted page of a SAML sign-in (CONTRACT §22, SAML IdP): `/t/{slug}/saml/{uid}`, where
// the SSO endpoint and the IdP-initiated start send the browser (modules/samlidp/pending.ts
// keeps the request under `uid` in this browser). Like an OpenID interaction's page
// (authorize.ts), it accepts only a live page session of an Active user of the tenant;
// otherwise it remembers itself as the interaction `saml.{uid}` (session.ts) and sends the
// browser to the sign-in page, so every method, with every policy of the sign-in (MFA,
// enforced SSO, suspension, lockout), comes back here, and the UserLogin row names the
// application (`metadata.samlApp`). ForceAuthn asks for a sign-in made for this very request.
// Then the signed response is posted to the ACS by a form that submits itself (pages.js),
// with a button for a browser without script; the CSP's form-action names the ACS's origin.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { pendingSamlSignIn, spendSamlSignIn } from '../../modules/samlidp/pending.ts'
import { samlAppById, samlResponseFor } from '../../modules/samlidp/service.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { AUTHORIZATION_STEP } from '../http.ts'
import { hidden } from '../layout.ts'
import { liveSignInOf } from '../live-sign-in.ts'
import {
  forgetInteraction,
  markProviderSignIn,
  rememberInteraction,
  SAML_INTERACTION,
} from '../session.ts'

type Req = FastifyRequest<{ Params: { uid: string } }>

export function samlSsoRoutes(app: FastifyInstance, pages: Pages): void {
  const { deps } = pages

  const stale = (request: FastifyRequest, reply: FastifyReply) => {
    const t = pages.t(request, reply)
    return pages.send(
      request,
      reply,
      t('authorize.staleTitle'),
      html`<h1>${t('authorize.staleHeading')}</h1>
<p>${t('authorize.staleText')}</p>`,
      { status: 400 },
    )
  }

  app.get('/saml/:uid', AUTHORIZATION_STEP, async (request: Req, reply) => {
    const now = deps.clock.now()
    const { tenant } = request
    const uid = request.params.uid
    const pending = /^[A-Za-z0-9_-]{16,64}$/.test(uid)
      ? pendingSamlSignIn(deps, request, tenant, uid, now)
      : undefined
    const app = pending ? await samlAppById(deps, tenant.id, pending.appId) : undefined
    // The application may have lost that ACS since (an edit): the request is stale then.
    if (!pending || !app?.settings.acsUrls.includes(pending.acsUrl)) {
      return stale(request, reply)
    }
    const ctx = pages.ctx(request)
    const interaction = `${SAML_INTERACTION}${uid}`
    const signIn = await liveSignInOf(pages, request, reply)
    if (!signIn || (pending.forceAuthn && signIn.interaction !== interaction)) {
      // The served client names the application to the API (UserLogin's samlApp).
      rememberInteraction(ctx, reply, interaction, `saml:${app.id}`)
      return pages.redirect(request, reply, 'sign-in')
    }
    const samlResponse = await samlResponseFor(deps, tenant, app, signIn, {
      acsUrl: pending.acsUrl,
      requestId: pending.requestId,
    })
    if (!samlResponse) return stale(request, reply)
    if (samlResponse === 'email_not_verified') {
      const t = pages.t(request, reply)
      return pages.send(
        request,
        reply,
        t('verify.title'),
        html`<h1>${t('verify.heading')}</h1>
<p>${t('saml.verifyFirst', { name: app.name })}</p>
<p><a class="button" href="${pages.url(request, 'account')}">${t('orgInvite.continue')}</a></p>`,
        { status: 403 },
      )
    }
    forgetInteraction(ctx, reply)
    markProviderSignIn(ctx, reply, signIn.sessionId)
    spendSamlSignIn(deps, request, reply, tenant, uid, now)
    const t = pages.t(request, reply)
    const name = app.name
    const body = html`<h1>${t('saml.heading', { name })}</h1>
<p>${t('saml.text', { name })}</p>
<form method="post" action="${pending.acsUrl}" data-autosubmit>
${hidden('SAMLResponse', Buffer.from(samlResponse).toString('base64'))}
${pending.relayState !== undefined ? hidden('RelayState', pending.relayState) : html``}
<button type="submit" class="primary">${t('saml.continue')}</button>
</form>`
    return pages.send(request, reply, t('saml.title'), body, {
      formTargets: [new URL(pending.acsUrl).origin],
    })
  })
}
