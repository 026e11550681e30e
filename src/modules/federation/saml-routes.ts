// The service as a SAML service provider for a tenant's SAML connections (CONTRACT §12, SP
// side): the SP metadata an admin hands the IdP, the start of a sign-in (the hosted page
// `/t/{slug}/sso/{id}` sends the browser here) and the Assertion Consumer Service the IdP
// posts the response to. Browser and protocol endpoints, not JSON operations: left out of
// the OpenAPI document like the OIDC callback.
//
// The ACS, in order: the connection (a SAML one of this tenant, enabled); the response's
// InResponseTo must be a request this browser has outstanding (saml-binding.ts, spent on
// first use); validateSamlResponse (saml.ts) with the service's clock; the assertion ID
// accepted once (sso_saml_assertions, kept until it could no longer be accepted); then
// finishSsoSignIn. Any refusal is refuseSsoSignIn's error page (4xx) with a UserLoginFailed
// row whose metadata.reason says why.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import { acceptAssertionOnce, findConnection, type SsoConnection } from './queries.ts'
import {
  authnRequestRedirect,
  responseInResponseTo,
  SAML_CLOCK_SKEW_MS,
  SamlError,
  type SamlIdp,
  type SamlSp,
  spMetadataXml,
  validateSamlResponse,
} from './saml.ts'
import { rememberSamlRequest, spendSamlRequest } from './saml-binding.ts'
import { samlAcsUrl, samlEntityId } from './service.ts'
import { finishSsoSignIn, refuseSsoSignIn } from './sso-signin.ts'

/** A SAMLResponse is a few KiB of base64; the form is refused well above that. */
const ACS_BODY_LIMIT = 512 * 1024

interface Params {
  id: string
}

function samlParts(deps: Pick<Deps, 'config'>, slug: string, connection: SsoConnection) {
  const idp: SamlIdp = {
    idpEntityId: connection.samlIdpEntityId ?? '',
    idpSsoUrl: connection.samlIdpSsoUrl ?? '',
    idpCertificates: connection.samlIdpCertificates ?? [],
  }
  const sp: SamlSp = {
    entityId: samlEntityId(deps, slug, connection.id),
    acsUrl: samlAcsUrl(deps, slug, connection.id),
  }
  return { idp, sp }
}

async function samlConnection(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  const connection = isUuid(id) ? await findConnection(deps.db, tenantId, id) : undefined
  return connection?.type === 'saml' ? connection : undefined
}

export async function ssoSamlRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  // The IdP posts the response as a form (SAML Bindings §3.5, HTTP-POST); this plugin's
  // routes alone read such bodies.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: ACS_BODY_LIMIT },
    (_request, body, done) => {
      const form: Record<string, string> = Object.create(null)
      for (const [name, value] of new URLSearchParams(body as string)) form[name] = value
      done(null, form)
    },
  )

  app.get<{ Params: Params }>(
    '/sso-connections/:id/saml/metadata',
    { schema: { hide: true } },
    async (request, reply) => {
      const { tenant } = request
      const connection = await samlConnection(deps, tenant.id, request.params.id)
      if (!connection) fail('not_found')
      const { sp } = samlParts(deps, tenant.slug, connection)
      return reply
        .type('application/samlmetadata+xml; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .send(spMetadataXml(sp))
    },
  )

  app.get<{ Params: Params }>(
    '/sso/:id/saml/start',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request, reply) => {
      const { tenant } = request
      const connection = await samlConnection(deps, tenant.id, request.params.id)
      if (!connection) return notFound(deps, request, reply)
      if (!connection.enabled) {
        return refuseSsoSignIn(deps, request, reply, connection, 'connection_disabled')
      }
      const { idp, sp } = samlParts(deps, tenant.slug, connection)
      const { url, requestId } = await authnRequestRedirect(idp, sp, '')
      rememberSamlRequest(deps, request, reply, tenant, connection.id, requestId, deps.clock.now())
      return reply.redirect(url, 303)
    },
  )

  app.post<{ Params: Params }>(
    '/sso/:id/saml/acs',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request, reply) => {
      const { tenant } = request
      const connection = await samlConnection(deps, tenant.id, request.params.id)
      if (!connection) return notFound(deps, request, reply)
      const refuse = (reason: string, status = 403) =>
        refuseSsoSignIn(deps, request, reply, connection, reason, { status })
      if (!connection.enabled) return refuse('connection_disabled')
      const body = request.body as Record<string, string> | undefined
      const samlResponse = typeof body?.SAMLResponse === 'string' ? body.SAMLResponse : ''
      if (!samlResponse) return refuse('saml_malformed', 400)
      const now = deps.clock.now()
      const inResponseTo = responseInResponseTo(samlResponse)
      if (!inResponseTo) return refuse('saml_unsolicited')
      // CONTRACT §12: a response to a request of this browser, each request answered once.
      const requestId = spendSamlRequest(
        deps,
        request,
        reply,
        tenant,
        connection.id,
        inResponseTo,
        now,
      )
      if (!requestId) return refuse('saml_request_unknown')
      const { idp, sp } = samlParts(deps, tenant.slug, connection)
      let assertion: Awaited<ReturnType<typeof validateSamlResponse>>
      try {
        assertion = await validateSamlResponse(idp, sp, samlResponse, { requestId, now })
      } catch (error) {
        if (!(error instanceof SamlError)) throw error
        request.log.warn({ err: error, connectionId: connection.id }, 'SAML response refused')
        return refuse(error.reason, error.reason === 'saml_malformed' ? 400 : 403)
      }
      // CONTRACT §12: an assertion ID accepted once; remembered while it could be accepted.
      const fresh = await acceptAssertionOnce(deps.db, {
        tenantId: tenant.id,
        connectionId: connection.id,
        assertionId: assertion.assertionId,
        expiresAt: new Date(assertion.notOnOrAfter.getTime() + SAML_CLOCK_SKEW_MS),
      })
      if (!fresh) return refuse('saml_replayed')
      return finishSsoSignIn(deps, request, reply, connection, {
        subject: assertion.nameId,
        email: assertion.email,
        mfa: assertion.mfa,
        claims: assertion.attributes,
      })
    },
  )
}

function notFound(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as Params
  return refuseSsoSignIn(deps, request, reply, { tenantId: request.tenant.id, id }, 'not_found', {
    status: 404,
    audited: true,
  })
}
