// Social connections (CONTRACT §19): the admin API (`connections:write`, as SSO connections),
// and the browser's way through a provider: `GET /v1/{slug}/social/{id}/start` (a 303 to the
// provider) and the callback `GET /v1/{slug}/social/{id}/callback` (a POST there for
// Apple's form_post), which answers a 303
// (signed in) or an error page, never JSON, so both are left out of the OpenAPI document
// like the other pages. The hosted sign-in page's buttons start at `/t/{slug}/social/{id}`
// (web/pages/social-sign-in.ts), which also carries the authorization the sign-in serves.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../../deps.ts'
import { isEmail, normalizeEmail } from '../../../lib/email.ts'
import { isUuid } from '../../../lib/ids.ts'
import { Ok, PageQuery, ResourceParams, responses, TenantSlugParams } from '../../../schemas.ts'
import { stringsOf } from '../oidc-routes.ts'
import { CallbackRefused } from '../oidc-signin.ts'
import {
  type Flow,
  type FlowScope,
  readFlow,
  refuseFlow,
  rememberFlow,
  signInThroughFlow,
} from '../sso-signin.ts'
import { linkThroughFlow } from './link.ts'
import { findSocialConnection, type SocialConnection } from './queries.ts'
import {
  CreateSocialConnectionBody,
  PatchSocialConnectionBody,
  SocialConnectionEnvelope,
  SocialConnectionPage,
} from './schemas.ts'
import {
  createSocialConnection,
  deleteSocialConnection,
  getSocialConnection,
  listSocialConnectionPage,
  updateSocialConnection,
} from './service.ts'
import { finishSocialSignIn, SocialUnavailable, startSocialSignIn } from './signin.ts'
import { socialSource, socialVia } from './source.ts'

const found = { 400: [], 404: ['not_found'] } as const
const any = { 400: [], 404: [] } as const

export async function socialConnectionRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Social connections']
  const config = { auth: 'admin' as const, permission: 'connections:write' as const }

  app.post(
    '/social-connections',
    {
      config,
      schema: {
        operationId: 'createSocialConnection',
        tags,
        summary: 'Create a social sign-in connection (Google, GitHub, …)',
        description:
          'Register `callbackUrl` (answered) at the provider. The client secret is stored sealed and never answered (`hasClientSecret`); Apple takes none but `apple` (its Team ID, Key ID and private key, the key sealed and never answered: `hasPrivateKey`), with which the service signs its client secret. An API key cannot create a connection (403 `api_key_not_allowed`): a connection that links by verified email can sign in the tenant’s users, Admins included.',
        params: TenantSlugParams,
        body: CreateSocialConnectionBody,
        response: responses(SocialConnectionEnvelope, { ...any, 403: ['api_key_not_allowed'] }),
      },
    },
    async (request) => createSocialConnection(deps, request.tenant, request.body, request.actor),
  )

  app.get(
    '/social-connections',
    {
      config,
      schema: {
        operationId: 'listSocialConnections',
        tags,
        summary: 'List the social sign-in connections, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(SocialConnectionPage, any),
      },
    },
    async (request) => listSocialConnectionPage(deps, request.tenant, request.query),
  )

  app.get(
    '/social-connections/:id',
    {
      config,
      schema: {
        operationId: 'getSocialConnection',
        tags,
        summary: 'Read a social sign-in connection (never its secret)',
        params: ResourceParams,
        response: responses(SocialConnectionEnvelope, found),
      },
    },
    async (request) => getSocialConnection(deps, request.tenant, request.params.id),
  )

  app.patch(
    '/social-connections/:id',
    {
      config,
      schema: {
        operationId: 'updateSocialConnection',
        tags,
        summary: 'Change a social sign-in connection',
        description:
          'The rules of creation apply; the client secret is kept unless a new one is given, and Apple’s fields unless named in `apple`. `issuer`, `endpoints` and `claims` are replaced whole, and `null` clears one where the provider goes without it (gitlab’s and microsoft’s issuer, github’s endpoints, oauth2’s claims); clearing what the provider needs (oidc’s issuer, oauth2’s endpoints) is 400 `validation`, nothing changed. An API key may change `name`, `enabled` and `order` only: any other field from a key is 403 `api_key_not_allowed`, nothing changed.',
        params: ResourceParams,
        body: PatchSocialConnectionBody,
        response: responses(SocialConnectionEnvelope, { ...found, 403: ['api_key_not_allowed'] }),
      },
    },
    async (request) =>
      updateSocialConnection(deps, request.tenant, request.params.id, request.body, request.actor),
  )

  app.delete(
    '/social-connections/:id',
    {
      config,
      schema: {
        operationId: 'deleteSocialConnection',
        tags,
        summary: 'Delete a social sign-in connection and its users’ links to it',
        description: 'The users stay; they sign in some other way.',
        params: ResourceParams,
        response: responses(Ok, found),
      },
    },
    async (request) => {
      await deleteSocialConnection(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )

  app.get(
    '/social/:id/start',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const { tenant } = request
      const { id } = request.params as { id: string }
      const query = stringsOf(request.query)
      const connection = await enabledConnection(deps, tenant.id, id)
      const scope: FlowScope = { kind: 'social', id }
      if (!connection) {
        return noSuchConnection(deps, request, reply, scope)
      }
      // Only a page of the tenant's own (no open redirect): `/t/{slug}/…`.
      const returnTo = query.return_to
      if (returnTo !== undefined && !isHostedPath(tenant.slug, returnTo)) {
        return refuseFlow(deps, request, reply, scope, socialVia(connection), 'validation', {
          status: 400,
          audited: true,
        })
      }
      return startFlow(deps, request, reply, connection, { returnTo })
    },
  )

  app.get(
    '/social/:id/callback',
    { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
    async (request: FastifyRequest, reply: FastifyReply) =>
      finishFlow(deps, request, reply, stringsOf(request.query)),
  )

  // Apple answers with a form POST (response_mode=form_post) to the same path: a cross-site
  // POST the flow's SameSite=None cookie still rides with. This child plugin alone reads
  // form bodies, as the SAML ACS's does, so the JSON API beside it takes none.
  await app.register(async (child) => {
    child.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
      (_request, body, done) => {
        const form: Record<string, string> = Object.create(null)
        for (const [name, value] of new URLSearchParams(body as string)) form[name] = value
        done(null, form)
      },
    )
    child.post(
      '/social/:id/callback',
      { schema: { hide: true }, config: { rateLimit: 'tokenEndpoints' } },
      async (request: FastifyRequest, reply: FastifyReply) =>
        finishFlow(deps, request, reply, stringsOf(request.body)),
    )
  })
}

/** Apple's form (code, state, user, id_token) is small; 64 KiB is plenty. */
const FORM_BODY_LIMIT = 64 * 1024

/**
 * The callback, with the provider's answer from the query (GET) or the form (POST): the
 * state bound to this browser, the code exchanged, then the linker (or the account page's
 * Connect).
 */
async function finishFlow(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  query: Record<string, string | undefined>,
) {
  const { tenant } = request
  const { id } = request.params as { id: string }
  const scope: FlowScope = { kind: 'social', id }
  const connection = isUuid(id) ? await findSocialConnection(deps.db, tenant.id, id) : undefined
  if (!connection) {
    return noSuchConnection(deps, request, reply, scope)
  }
  const failVia = socialVia(connection)
  if (!connection.enabled) {
    return refuseFlow(deps, request, reply, scope, failVia, 'connection_disabled', {})
  }
  // The state must be the one this browser left with (login CSRF): else the state is
  // refused without being spent, so the browser that owns it can still finish.
  const flow = readFlow(deps, request, tenant, scope)
  if (!query.state || flow.binding !== query.state) {
    return refuseFlow(deps, request, reply, scope, failVia, 'invalid_state', { status: 400 })
  }
  let profile: Awaited<ReturnType<typeof finishSocialSignIn>>
  try {
    profile = await finishSocialSignIn(deps, tenant, connection, query)
  } catch (error) {
    if (!(error instanceof CallbackRefused)) throw error
    request.log.warn({ err: error.message, connectionId: id }, 'social sign-in refused')
    return refuseFlow(deps, request, reply, scope, failVia, error.reason, {
      status: error.status,
    })
  }
  if (flow.link) return linkThroughFlow(deps, request, reply, connection, flow.link, profile)
  const email = profile.email && isEmail(profile.email) ? normalizeEmail(profile.email) : null
  return signInThroughFlow(deps, request, reply, scope, flow, {
    source: socialSource(deps, tenant, connection, profile, flow),
    failVia,
    email,
    amr: ['fed'],
  })
}

/** The page for a connection id the tenant has none of (nothing to audit it against). */
function noSuchConnection(
  deps: FlowDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: FlowScope,
) {
  const failVia = { method: 'social', connectionId: scope.id }
  return refuseFlow(deps, request, reply, scope, failVia, 'not_found', {
    status: 404,
    audited: true,
  })
}

/** The tenant's enabled connection `id`, if any. */
export async function enabledConnection(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  const connection = isUuid(id) ? await findSocialConnection(deps.db, tenantId, id) : undefined
  return connection?.enabled ? connection : undefined
}

type FlowDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'ssoPages'>

/**
 * The provider's authorization URL for this browser, the flow (the authorization the sign-in
 * serves, where to go after, or the session that connects an identity) noted in a cookie of
 * this connection's routes with the state that binds it; undefined when the provider cannot
 * be reached.
 */
export async function beginFlow(
  deps: FlowDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  connection: SocialConnection,
  pending: Omit<Flow, 'binding'>,
): Promise<string | undefined> {
  const { tenant } = request
  try {
    const { url, state } = await startSocialSignIn(deps, tenant, connection)
    rememberFlow(deps, reply, tenant, { kind: 'social', id: connection.id }, pending, state)
    return url
  } catch (error) {
    if (!(error instanceof SocialUnavailable)) throw error
    request.log.warn(
      { err: error.message, connectionId: connection.id },
      'social provider unavailable',
    )
    return undefined
  }
}

/** Sends the browser to the provider (303), or answers the "cannot be reached" page. */
export async function startFlow(
  deps: FlowDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  connection: SocialConnection,
  pending: Omit<Flow, 'binding'>,
): Promise<FastifyReply> {
  const url = await beginFlow(deps, request, reply, connection, pending)
  if (url) return reply.redirect(url, 303)
  const scope: FlowScope = { kind: 'social', id: connection.id }
  return refuseFlow(deps, request, reply, scope, socialVia(connection), 'unavailable', {
    status: 503,
    audited: true,
  })
}

/** A path of the tenant's hosted pages: `/t/{slug}` or below it, nothing else. */
function isHostedPath(slug: string, value: string): boolean {
  const base = `/t/${slug}`
  if (value !== base && !value.startsWith(`${base}/`) && !value.startsWith(`${base}?`)) return false
  // No backslash or whitespace tricks, no `.` or `..` segments.
  return !/[\\\s]|\/\.\.?(\/|$|\?)/.test(value)
}
