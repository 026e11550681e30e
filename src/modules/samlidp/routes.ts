// The tenant as a SAML 2.0 identity provider (CONTRACT §22): the IdP metadata, the SSO
// endpoint of both bindings an AuthnRequest arrives by, and the IdP-initiated start an
// application tile links to. Browser and protocol endpoints, not JSON operations: left out
// of the OpenAPI document like the SP side's (federation/saml-routes.ts).
//
// The SSO endpoint checks the request (service.ts: the SP by its Issuer, a registered ACS,
// the signature when the SP has certificates), keeps it in this browser (pending.ts) and
// sends the browser to the hosted page `/t/{slug}/saml/{uid}`, which signs the user in
// through the hosted pages with every policy and posts the signed response
// (web/pages/saml-sso.ts). A refusal is an error page (4xx), never a post to the SP.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { SamlIdpError } from './authn-request.ts'
import { samlSigningKeys } from './keys.ts'
import { idpEndpoints, idpMetadataXml } from './metadata.ts'
import { rememberSamlSignIn } from './pending.ts'
import { checkAuthnRequest, MAX_RELAY_STATE, samlAppById } from './service.ts'

/** A POSTed AuthnRequest is a few KiB of base64; the form is refused well above that. */
const SSO_BODY_LIMIT = 128 * 1024

export async function samlIdpRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  // SAML Bindings §3.5: an AuthnRequest posted as a form; this plugin's routes alone read it.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: SSO_BODY_LIMIT },
    (_request, body, done) => {
      const form: Record<string, string> = Object.create(null)
      for (const [name, value] of new URLSearchParams(body as string)) form[name] = value
      done(null, form)
    },
  )

  const refusal = async (
    request: FastifyRequest,
    reply: FastifyReply,
    reason: string,
    status: number,
  ) => {
    deps.ssoPages.headers(reply, { authorization: false })
    const markup = await deps.ssoPages.refusal(request, request.tenant, reason)
    return reply.code(status).type('text/html; charset=utf-8').send(markup)
  }

  const hasKey = () => samlSigningKeys(deps.config.oidcSigningKeys, 'probe').length > 0

  app.get('/saml/:tenantSlug/metadata', { schema: { hide: true } }, async (request, reply) => {
    const keys = samlSigningKeys(deps.config.oidcSigningKeys, request.tenant.id)
    if (keys.length === 0) fail('not_found')
    return reply
      .type('application/samlmetadata+xml; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .send(idpMetadataXml(idpEndpoints(deps.config.publicUrl, request.tenant.slug), keys))
  })

  /** The request checked, kept in this browser, and the browser sent to the hosted page. */
  const sso = async (
    request: FastifyRequest,
    reply: FastifyReply,
    input:
      | { binding: 'redirect'; samlRequest: string; rawQuery: string }
      | { binding: 'post'; samlRequest: string },
    relayState: string | undefined,
  ) => {
    if (!hasKey()) return refusal(request, reply, 'saml_unavailable', 404)
    if (
      !input.samlRequest ||
      (relayState !== undefined && Buffer.byteLength(relayState) > MAX_RELAY_STATE)
    ) {
      return refusal(request, reply, 'saml_malformed', 400)
    }
    let checked: Awaited<ReturnType<typeof checkAuthnRequest>>
    try {
      checked = await checkAuthnRequest(deps, request.tenant, input)
    } catch (error) {
      if (!(error instanceof SamlIdpError)) throw error
      request.log.warn({ err: error }, 'SAML AuthnRequest refused')
      const status =
        error.reason === 'saml_malformed' || error.reason === 'saml_binding_unsupported' ? 400 : 403
      return refusal(request, reply, error.reason, status)
    }
    const path = rememberSamlSignIn(
      deps,
      request,
      reply,
      request.tenant,
      {
        appId: checked.app.id,
        acsUrl: checked.acsUrl,
        requestId: checked.request.id,
        relayState,
        forceAuthn: checked.request.forceAuthn,
      },
      deps.clock.now(),
    )
    return reply.redirect(path, 303)
  }

  app.get<{ Querystring: Record<string, string> }>(
    '/saml/:tenantSlug/sso',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request, reply) => {
      const query = request.query
      const rawQuery = request.url.includes('?')
        ? request.url.slice(request.url.indexOf('?') + 1)
        : ''
      return sso(
        request,
        reply,
        {
          binding: 'redirect',
          samlRequest: typeof query.SAMLRequest === 'string' ? query.SAMLRequest : '',
          rawQuery,
        },
        typeof query.RelayState === 'string' ? query.RelayState : undefined,
      )
    },
  )

  app.post(
    '/saml/:tenantSlug/sso',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, string>
      return sso(
        request,
        reply,
        {
          binding: 'post',
          samlRequest: typeof body.SAMLRequest === 'string' ? body.SAMLRequest : '',
        },
        typeof body.RelayState === 'string' ? body.RelayState : undefined,
      )
    },
  )

  // IdP-initiated (SAML Profiles §4.1.5, unsolicited response): the response goes to the
  // application's first ACS, without InResponseTo; `RelayState` is handed on to the SP.
  app.get<{ Params: { id: string }; Querystring: Record<string, string> }>(
    '/v1/:tenantSlug/saml-apps/:id/start',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request, reply) => {
      if (!hasKey()) return refusal(request, reply, 'saml_unavailable', 404)
      const found = await samlAppById(deps, request.tenant.id, request.params.id)
      if (!found) return refusal(request, reply, 'not_found', 404)
      const relayState =
        typeof request.query.RelayState === 'string' ? request.query.RelayState : undefined
      if (relayState !== undefined && Buffer.byteLength(relayState) > MAX_RELAY_STATE) {
        return refusal(request, reply, 'saml_malformed', 400)
      }
      const path = rememberSamlSignIn(
        deps,
        request,
        reply,
        request.tenant,
        { appId: found.id, acsUrl: found.settings.acsUrls[0], relayState, forceAuthn: false },
        deps.clock.now(),
      )
      return reply.redirect(path, 303)
    },
  )
}
