// SSO connections (CONTRACT §12): an Admin's token or an API key, as the applications routes.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, PageQuery, ResourceParams, responses, TenantSlugParams } from '../../schemas.ts'
import {
  ConnectionEnvelope,
  ConnectionPage,
  CreateConnectionBody,
  PatchConnectionBody,
} from './schemas.ts'
import {
  createConnection,
  deleteConnection,
  getConnection,
  listConnectionPage,
  updateConnection,
} from './service.ts'

const found = { 400: [], 404: ['not_found'] } as const
const any = { 400: [], 404: [] } as const

export async function ssoConnectionRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['SSO connections']
  const config = { auth: 'admin' as const, permission: 'connections:write' as const }

  app.post(
    '/sso-connections',
    {
      config,
      schema: {
        operationId: 'createSsoConnection',
        tags,
        summary: 'Create an SSO connection (OIDC or SAML 2.0)',
        description:
          'The connection owns its `domains`: a domain belongs to at most one connection of the tenant (409 domain_taken). The OIDC client secret is stored sealed and never answered (`hasClientSecret`). An API key cannot create a connection (403 `api_key_not_allowed`): a connection signs in every user of its domains, Admins included. `organizationId` (CONTRACT §18) names an organization of the tenant that its sign-ins join (an unknown one, or another tenant’s: 400 `validation`, nothing made).',
        params: TenantSlugParams,
        body: CreateConnectionBody,
        response: responses(ConnectionEnvelope, {
          ...any,
          403: ['api_key_not_allowed'],
          409: ['domain_taken'],
        }),
      },
    },
    async (request) =>
      createConnection(deps, request.tenant, request.body, request.actor, request.permissions),
  )

  app.get(
    '/sso-connections',
    {
      config,
      schema: {
        operationId: 'listSsoConnections',
        tags,
        summary: 'List the SSO connections, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(ConnectionPage, any),
      },
    },
    async (request) => listConnectionPage(deps, request.tenant, request.query),
  )

  app.get(
    '/sso-connections/:id',
    {
      config,
      schema: {
        operationId: 'getSsoConnection',
        tags,
        summary: 'Read an SSO connection (never its secret)',
        params: ResourceParams,
        response: responses(ConnectionEnvelope, found),
      },
    },
    async (request) => getConnection(deps, request.tenant, request.params.id),
  )

  app.patch(
    '/sso-connections/:id',
    {
      config,
      schema: {
        operationId: 'updateSsoConnection',
        tags,
        summary: 'Change an SSO connection',
        description:
          'The rules of creation apply. `oidc` and `saml` are merged into the connection’s; the client secret is kept unless a new one is given. An API key may change `name`, `enabled` and `enforce` only: `oidc`, `saml`, `domains`, `defaultRole`, `mfaSatisfied`, `jitProvisioning`, `roleMapping` or `organizationId` from a key is 403 `api_key_not_allowed`, nothing changed. `organizationId: null` stops the sign-ins joining an organization (the members stay).',
        params: ResourceParams,
        body: PatchConnectionBody,
        response: responses(ConnectionEnvelope, {
          ...found,
          403: ['api_key_not_allowed'],
          409: ['domain_taken'],
        }),
      },
    },
    async (request) =>
      updateConnection(
        deps,
        request.tenant,
        request.params.id,
        request.body,
        request.actor,
        request.permissions,
      ),
  )

  app.delete(
    '/sso-connections/:id',
    {
      config,
      schema: {
        operationId: 'deleteSsoConnection',
        tags,
        summary: 'Delete an SSO connection and its users’ links to it',
        description: 'The users stay; they sign in some other way.',
        params: ResourceParams,
        response: responses(Ok, found),
      },
    },
    async (request) => {
      await deleteConnection(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )
}
