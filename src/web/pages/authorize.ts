// The OpenID provider's interactions on the hosted pages (CONTRACT §11, Sign-in and Consent).
// The authorization endpoint sends the browser to /t/{slug}/authorize/{uid} with oidc-provider's
// `_interaction` cookie, signed and scoped to that path, so only the browser that made the
// request can load the interaction. Then:
//   - login: a live page session of this tenant (the service verifies its token and session)
//     signs the user in, unless `prompt=login` asks for a sign-in made for this request or
//     `max_age` finds it too old; otherwise the sign-in page, with the interaction remembered
//     in a sealed cookie (session.ts), brings the browser back here after any method;
//   - consent: a first-party application is granted what it asked; a third-party one shows
//     the application and the scopes with Allow and Deny;
//   - between the two, the organization's steps (CONTRACT §18): the picker of
//     prompt=select_organization and the second factor an organization may ask
//     (authorize-organization.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { MessageKey } from '../../i18n/index.ts'
import { apiResourceByIdentifier } from '../../modules/apiresources/service.ts'
import type { Actor } from '../../modules/audit/recorder.ts'
import { SERVICE_SESSION } from '../../modules/oidc/browser-sign-in.ts'
import { asPublicRequest, poolOf } from '../../modules/oidc/pool.ts'
import type { OidcInteraction, OidcProvider } from '../../modules/oidc/provider.ts'
import { grantableScopes } from '../../modules/oidc/resources.ts'
import type { Pages } from '../context.ts'
import { csrfChecked } from '../csrf.ts'
import { type Html, html } from '../html.ts'
import { AUTHORIZATION_STEP, type Form, formText, setPageHeaders } from '../http.ts'
import { form, hidden } from '../layout.ts'
import { liveSignInOf } from '../live-sign-in.ts'
import { providerHtmlHeaders } from '../provider-page.ts'
import {
  forgetInteraction,
  isInteractionUid,
  markProviderSignIn,
  rememberInteraction,
} from '../session.ts'
import { organizationSteps } from './authorize-organization.ts'

type Req = FastifyRequest<{ Params: { uid: string }; Body: Form }>

/** What each OIDC scope lets the application see, in the consent page's words (keys of the catalogues). */
export const SCOPE_WORDS: Record<string, MessageKey> = {
  openid: 'scope.openid',
  email: 'scope.email',
  profile: 'scope.profile',
  offline_access: 'scope.offline_access',
  roles: 'scope.roles',
  organizations: 'scope.organizations',
}

/** The interaction page and its consent form, the POST behind the one CSRF check (csrf.ts). */
export function authorizeRoutes(app: FastifyInstance, pages: Pages): void {
  csrfChecked(app, pages, (app) => interactionRoutes(app, pages))
}

function interactionRoutes(app: FastifyInstance, pages: Pages): void {
  const { deps } = pages
  const pool = poolOf(deps as Parameters<typeof poolOf>[0])
  // The pages' headers on the HTML oidc-provider writes itself (provider-page.ts).
  pool?.onBuild((provider) => {
    ;(provider as unknown as { use(fn: typeof providerHtmlHeaders): void }).use(providerHtmlHeaders)
  })

  const liveSignIn = (request: FastifyRequest, reply: FastifyReply) =>
    liveSignInOf(pages, request, reply)

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

  /** The interaction of this browser at this path, or undefined. */
  const load = async (request: Req, reply: FastifyReply) => {
    if (!pool || !isInteractionUid(request.params.uid)) return undefined
    const provider = pool.provider(request.tenant)
    asPublicRequest(request.raw, deps.config.publicUrl, request.ip)
    try {
      const interaction = await provider.interactionDetails(request.raw, reply.raw)
      if (interaction.uid !== request.params.uid) return undefined
      pages.useUiLocales(request, reply, interaction.params.ui_locales)
      return { provider, interaction }
    } catch {
      // No `_interaction` cookie (another browser), an expired or finished interaction.
      return undefined
    }
  }

  /**
   * Hands the result to the provider, which carries the authorization on from there (to the
   * application's redirect URI); after a form, through a page (Pages.continueTo).
   */
  const finish = async (
    request: FastifyRequest,
    reply: FastifyReply,
    provider: OidcProvider,
    result: Record<string, unknown>,
  ) => {
    const returnTo = await provider.interactionResult(request.raw, reply.raw, result)
    if (request.method === 'POST') return pages.continueTo(request, reply, returnTo)
    setPageHeaders(reply, { authorization: true })
    return reply.redirect(returnTo, 303)
  }

  const login = async (
    request: Req,
    reply: FastifyReply,
    provider: OidcProvider,
    interaction: OidcInteraction,
  ) => {
    const signIn = await liveSignIn(request, reply)
    const maxAge = Number(interaction.params.max_age)
    const age = signIn ? (deps.clock.now().getTime() - signIn.signedInAt.getTime()) / 1000 : 0
    // A sign-in made for this very request answers prompt=login, and any max_age however
    // short (the sign-in itself may take longer than max_age).
    const madeForThis = signIn?.interaction === interaction.uid
    const loginAsked =
      interaction.prompt.reasons.includes('login_prompt') ||
      (interaction.params.prompt ?? '').split(' ').includes('login')
    const usable =
      signIn &&
      (!loginAsked || madeForThis) &&
      (madeForThis ||
        !Number.isFinite(maxAge) ||
        interaction.params.max_age === undefined ||
        age <= maxAge)
    const ctx = pages.ctx(request)
    if (!signIn || !usable) {
      rememberInteraction(ctx, reply, interaction.uid, String(interaction.params.client_id))
      return pages.redirect(request, reply, 'sign-in')
    }
    forgetInteraction(ctx, reply)
    markProviderSignIn(ctx, reply, signIn.sessionId)
    return finish(request, reply, provider, {
      login: {
        accountId: signIn.userId,
        amr: signIn.amr.length > 0 ? signIn.amr : undefined,
        ts: Math.floor(signIn.signedInAt.getTime() / 1000),
        remember: true,
        // The provider reuses its session only while this one is live (provider.ts).
        [SERVICE_SESSION]: signIn.sessionId,
      },
    })
  }

  /**
   * The resource scopes the interaction asks, each resource's split into those the user's
   * roles grant (allowed: base and custom roles, CONTRACT §11 API resources and §17 Tokens,
   * and the organization roles it holds, §18) and the others.
   */
  const resourceScopes = async (
    request: FastifyRequest,
    interaction: OidcInteraction,
    accountId: string,
  ) => {
    const out = []
    for (const [indicator, scopes] of Object.entries(
      interaction.prompt.details.missingResourceScopes ?? {},
    )) {
      const resource = await apiResourceByIdentifier(deps, request.tenant.id, indicator)
      const rule = (name: string) => resource?.scopes.find((s) => s.name === name)
      const granted = new Set(
        resource ? await grantableScopes(deps.db, request.tenant.id, resource, accountId) : [],
      )
      const allowed = scopes.filter((name) => granted.has(name))
      const refused = scopes.filter((name) => !allowed.includes(name))
      out.push({ indicator, resource, rule, allowed, refused })
    }
    return out
  }

  /**
   * The grant for what the interaction asks, resource scopes cut to the user's roles. The
   * others are rejected in the grant: left out of it, and not asked again (oidc-provider's
   * consent prompt asks only for scopes the grant has neither granted nor rejected) until a
   * role grants them (oidc/provider.ts, reopenRefused).
   */
  const grantFor = async (
    request: FastifyRequest,
    provider: OidcProvider,
    interaction: OidcInteraction,
    accountId: string,
  ) => {
    const { details } = interaction.prompt
    const grant = interaction.grantId
      ? await provider.Grant.find(interaction.grantId)
      : new provider.Grant({ accountId, clientId: interaction.params.client_id })
    if (!grant) return undefined
    if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '))
    if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims)
    for (const { indicator, allowed, refused } of await resourceScopes(
      request,
      interaction,
      accountId,
    )) {
      if (allowed.length > 0) grant.addResourceScope(indicator, allowed.join(' '))
      if (refused.length > 0) grant.rejectResourceScope(indicator, refused.join(' '))
    }
    return grant
  }

  /** What the consent page lists: each scope asked that the user may grant, in words. */
  const scopeLines = async (
    request: FastifyRequest,
    interaction: OidcInteraction,
    accountId: string,
  ) => {
    const { details } = interaction.prompt
    const lines: Html[] = []
    const t = pages.t(request)
    for (const scope of details.missingOIDCScope ?? []) {
      const words = SCOPE_WORDS[scope]
      lines.push(html`<li>${words ? t(words) : scope}</li>`)
    }
    for (const { indicator, resource, rule, allowed } of await resourceScopes(
      request,
      interaction,
      accountId,
    )) {
      for (const name of allowed) {
        const described = rule(name)?.description
        lines.push(
          html`<li>${described || name} <span class="hint">(${name}, ${resource?.name ?? indicator})</span></li>`,
        )
      }
    }
    return lines
  }

  const consent = async (
    request: Req,
    reply: FastifyReply,
    provider: OidcProvider,
    interaction: OidcInteraction,
  ) => {
    const accountId = interaction.session?.accountId
    // The consent is the page's signed-in user's: after another sign-in in this browser (or
    // a sign-out) the login starts again, as whoever is signed in on the page now.
    const signIn = await liveSignIn(request, reply)
    if (!accountId || signIn?.userId !== accountId) {
      return login(request, reply, provider, interaction)
    }
    const client = await provider.Client.find(interaction.params.client_id)
    if (!client) return stale(request, reply)
    const metadata = client.metadata()
    if (metadata.first_party === true) {
      const grant = await grantFor(request, provider, interaction, accountId)
      if (!grant) return stale(request, reply)
      return finish(request, reply, provider, { consent: { grantId: await grant.save() } })
    }
    const action = pages.url(request, `authorize/${interaction.uid}/consent`)
    const csrf = pages.csrf(request, reply)
    const name = String(metadata.client_name ?? metadata.client_id)
    const t = pages.t(request, reply)
    const tenant = request.tenant.name
    const body = html`<h1>${t('consent.heading', { name, tenant })}</h1>
<p>${t('consent.intro', { name })}</p>
<ul class="consent-scopes">${await scopeLines(request, interaction, accountId)}</ul>
<p class="hint">${t('consent.hint', { name, tenant })}</p>
<div class="consent-actions">
${form(action, csrf, hidden('decision', 'allow'), t('consent.allow'))}
${form(action, csrf, hidden('decision', 'deny'), t('consent.deny'), { danger: true })}
</div>`
    return pages.send(request, reply, t('consent.title', { name }), body)
  }

  const organization = organizationSteps(app, pages, {
    load,
    finish,
    login,
    stale,
    async sessionOf(request, reply, interaction) {
      // The interaction's user, signed in on the page (as the consent page asks).
      const accountId = interaction.session?.accountId
      const signIn = await liveSignIn(request, reply)
      if (!accountId || signIn?.userId !== accountId) return undefined
      return pages.session(request, reply)
    },
  })

  app.get('/authorize/:uid', AUTHORIZATION_STEP, async (request: Req, reply) => {
    const found = await load(request, reply)
    if (!found) return stale(request, reply)
    const { provider, interaction } = found
    if (interaction.prompt.name === 'login') return login(request, reply, provider, interaction)
    if (interaction.prompt.name === 'consent') {
      return consent(request, reply, provider, interaction)
    }
    return organization.show(request, reply, provider, interaction) ?? stale(request, reply)
  })

  app.post('/authorize/:uid/consent', AUTHORIZATION_STEP, async (request: Req, reply) => {
    const found = await load(request, reply)
    if (found?.interaction.prompt.name !== 'consent') return stale(request, reply)
    const { provider, interaction } = found
    const accountId = interaction.session?.accountId
    // The page session must still be the user the interaction signed in; else the login
    // starts again, and the consent page comes back for whoever signs in.
    const signIn = await liveSignIn(request, reply)
    if (!accountId || signIn?.userId !== accountId) {
      return login(request, reply, provider, interaction)
    }
    if (formText(request.body, 'decision') !== 'allow') {
      return finish(request, reply, provider, {
        error: 'access_denied',
        error_description: 'The user refused to allow the application',
      })
    }
    const grant = await grantFor(request, provider, interaction, accountId)
    if (!grant) return stale(request, reply)
    const grantId = await grant.save()
    const actor: Actor = {
      type: 'user',
      id: accountId,
      ip: request.ip,
      userAgent: request.headers['user-agent'] ?? null,
    }
    await deps.audit.record(deps.db, request.tenant.id, actor, [
      {
        action: 'ApplicationConsentGranted',
        metadata: {
          clientId: interaction.params.client_id,
          // What was granted: the resource scopes beyond the user's role are not.
          scopes: (interaction.prompt.details.missingOIDCScope ?? []).concat(
            ...(await resourceScopes(request, interaction, accountId)).map((r) => r.allowed),
          ),
        },
      },
    ])
    return finish(request, reply, provider, { consent: { grantId } })
  })
}
