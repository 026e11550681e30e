// Signing in through an SSO connection (CONTRACT §12): "Sign in with SSO" takes an email and
// routes by its domain to the tenant's connection that owns it, or a link names the
// connection (`/t/{slug}/sso/{id}`). That page notes the authorization request (§11) the
// sign-in serves (federation/sso-signin.ts, rememberFlow) and sends the browser to the
// IdP: for OIDC through federation/oidc-signin.ts, for SAML through the SAML start route.
// The way back (the OIDC callback, the SAML ACS) ends in finishSsoSignIn. A form that leads
// there (this page's, an enforced domain's password or code form) answers with a page that
// goes on by itself (Pages.continueTo): the CSP's form-action 'self' would stop a redirect
// chain that answers a form and ends at the IdP.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { MessageKey } from '../../i18n/index.ts'
import { isUuid } from '../../lib/ids.ts'
import { emailDomain } from '../../modules/federation/domains.ts'
import { OidcUnavailable, startOidcSignIn } from '../../modules/federation/oidc-signin.ts'
import { connectionByDomain, connectionById } from '../../modules/federation/service.ts'
import { rememberFlow } from '../../modules/federation/sso-signin.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import { emailField, errorSummary, type FormErrors, form } from '../layout.ts'
import { pendingInteractionClient, pendingInteractionUid } from '../session.ts'
import type { Req } from './flow.ts'

/** `sso/{id}`: the page that starts a sign-in through connection `id`. */
export const ssoStartPath = (id: string) => `sso/${id}`

/** The enabled connection owning `email`'s domain, if any. */
export async function connectionForEmail(pages: Pages, tenantId: string, email: string) {
  const domain = emailDomain(email)
  if (!domain) return undefined
  const connection = await connectionByDomain(pages.deps, tenantId, domain)
  return connection?.enabled ? connection : undefined
}

/** The authorization (§11) this browser signs in for, read from the pages' cookies. */
export function pendingFlow(
  pages: Pages,
  request: FastifyRequest,
  tenant: { id: string; slug: string },
) {
  const { config, cipher } = pages.deps
  const ctx = { config, cipher, tenantId: tenant.id, slug: tenant.slug }
  return {
    interaction: pendingInteractionUid(ctx, request),
    clientId: pendingInteractionClient(ctx, request),
  }
}

function ssoPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { email?: string; errors?: FormErrors; status?: number } = {},
) {
  const csrf = pages.csrf(request, reply)
  const t = pages.t(request, reply)
  const body = html`<h1>${t('signIn.sso')}</h1>
<p>${t('sso.intro')}</p>
${errorSummary(state.errors, t)}
${form(pages.url(request, 'sign-in/sso'), csrf, emailField(state.email, state.errors, t), t('common.continue'))}
<p><a href="${pages.url(request, 'sign-in')}">${t('signIn.alternatives')}</a></p>`
  return pages.send(request, reply, t('signIn.sso'), body, { status: state.status })
}

function errorPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  words: MessageKey,
  status: number,
) {
  const t = pages.t(request, reply)
  const body = html`<h1>${t('sso.unavailableHeading')}</h1>
<div class="error-summary" role="alert"><p>${t(words)}</p></div>
<p><a class="button" href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`
  return pages.send(request, reply, t('oidcError.title'), body, { status })
}

export function ssoSignInRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/sign-in/sso', async (request, reply) => ssoPage(pages, request, reply))

  app.post('/sign-in/sso', async (request: Req, reply) => {
    const email = formText(request.body, 'email').trim()
    const connection = await connectionForEmail(pages, request.tenant.id, email)
    if (!connection) {
      const errors = {
        fields: {
          email: pages.t(request, reply)('sso.noConnection'),
        },
      }
      return ssoPage(pages, request, reply, { email, errors, status: 400 })
    }
    return pages.continueTo(request, reply, pages.url(request, ssoStartPath(connection.id)))
  })

  app.get('/sso/:id', async (request, reply) => {
    const { tenant } = request
    const { id } = request.params as { id: string }
    const connection = isUuid(id) ? await connectionById(pages.deps, tenant.id, id) : undefined
    if (!connection?.enabled) {
      return errorPage(pages, request, reply, 'sso.notFound', 404)
    }
    const scope = { kind: 'sso' as const, id: connection.id }
    if (connection.type === 'saml') {
      rememberFlow(pages.deps, reply, tenant, scope, pendingFlow(pages, request, tenant))
      return reply.redirect(`/v1/${tenant.slug}/sso/${connection.id}/saml/start`, 303)
    }
    try {
      const { url, state } = await startOidcSignIn(pages.deps, tenant, connection)
      rememberFlow(pages.deps, reply, tenant, scope, pendingFlow(pages, request, tenant), state)
      return reply.redirect(url, 303)
    } catch (error) {
      if (!(error instanceof OidcUnavailable)) throw error
      request.log.warn({ err: error.message, connectionId: id }, 'SSO IdP unavailable')
      return errorPage(pages, request, reply, 'sso.unreachable', 503)
    }
  })
}
