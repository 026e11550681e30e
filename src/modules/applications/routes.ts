// Applications of the OpenID provider (CONTRACT §11): an Admin's token or an API key, as
// the users routes (§4). POST applications, GET applications, GET/PATCH/DELETE
// applications/{id}, POST applications/{id}/secret.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, PageQuery, ResourceParams, responses, TenantSlugParams } from '../../schemas.ts'
import {
  ApplicationEnvelope,
  ApplicationPage,
  ClientSecret,
  CreateApplicationBody,
  PatchApplicationBody,
} from './schemas.ts'
import {
  createApplication,
  deleteApplication,
  getApplication,
  listApplicationPage,
  rotateApplicationSecret,
  updateApplication,
} from './service.ts'

export async function applicationRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['OpenID provider']

  app.post(
    '/applications',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'createApplication',
        tags,
        summary: 'Register an application (an OAuth client of the tenant’s issuer)',
        description:
          'Web and machine apps get a `clientSecret`, returned this once. Redirect URIs are absolute, without a fragment, https or http on localhost/127.0.0.1/[::1]; native apps may also use a private-use scheme (`com.example.app:/callback`). A machine app has no redirect URIs; `allowedScopes` are the API resource scopes it may get by client credentials. A `saml` app (CONTRACT §22, the tenant as SAML identity provider) takes only `entityId`, `acsUrls`, `nameIdFormat`, `attributes`, `spCertificates`, `signResponse` or `spMetadataXml` (which fills the others); its entity id is unique in the tenant (409 `entity_id_taken`).',
        params: TenantSlugParams,
        body: CreateApplicationBody,
        response: responses(ApplicationEnvelope, { 400: [], 404: [], 409: ['entity_id_taken'] }),
      },
    },
    async (request) => createApplication(deps, request.tenant.id, request.body, request.actor),
  )

  app.get(
    '/applications',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'listApplications',
        tags,
        summary: 'List the applications, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(ApplicationPage, { 400: [], 404: [] }),
      },
    },
    async (request) => listApplicationPage(deps, request.tenant.id, request.query),
  )

  app.get(
    '/applications/:id',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'getApplication',
        tags,
        summary: 'Read an application (never its secret)',
        params: ResourceParams,
        response: responses(ApplicationEnvelope, {
          400: [],
          404: ['not_found'],
        }),
      },
    },
    async (request) => getApplication(deps, request.tenant.id, request.params.id),
  )

  app.patch(
    '/applications/:id',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'updateApplication',
        tags,
        summary: 'Change an application (its type and client id stay)',
        description: 'The redirect URI rules of creation apply to the new lists.',
        params: ResourceParams,
        body: PatchApplicationBody,
        response: responses(ApplicationEnvelope, {
          400: [],
          404: ['not_found'],
          409: ['entity_id_taken'],
        }),
      },
    },
    async (request) =>
      updateApplication(deps, request.tenant.id, request.params.id, request.body, request.actor),
  )

  app.post(
    '/applications/:id/secret',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'rotateApplicationSecret',
        tags,
        summary: 'Replace the client secret (the old one stops working at once)',
        description: 'Web and machine apps only; a spa or native app has no secret (400).',
        params: ResourceParams,
        response: responses(ClientSecret, {
          400: [],
          404: ['not_found'],
        }),
      },
    },
    async (request) =>
      rotateApplicationSecret(deps, request.tenant.id, request.params.id, request.actor),
  )

  app.delete(
    '/applications/:id',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'deleteApplication',
        tags,
        summary: 'Delete an application, revoking its grants and tokens',
        description:
          'Its codes, refresh tokens and opaque access tokens stop working at once; JWT access tokens issued for an API resource are self-contained and run out at their `exp`.',
        params: ResourceParams,
        response: responses(Ok, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      await deleteApplication(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )
}
