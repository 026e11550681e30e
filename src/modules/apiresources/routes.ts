// API resources of the OpenID provider (CONTRACT §11): an Admin's token or an API key.
// POST api-resources, GET api-resources, GET/PATCH/DELETE api-resources/{id}.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, PageQuery, ResourceParams, responses, TenantSlugParams } from '../../schemas.ts'
import {
  ApiResourceEnvelope,
  ApiResourcePage,
  CreateApiResourceBody,
  PatchApiResourceBody,
} from './schemas.ts'
import {
  createApiResource,
  deleteApiResource,
  getApiResource,
  listApiResourcePage,
  updateApiResource,
} from './service.ts'

export async function apiResourceRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['OpenID provider']

  app.post(
    '/api-resources',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'createApiResource',
        tags,
        summary: 'Register an API that access tokens are issued for',
        description:
          'Clients name it with `resource` (RFC 8707); its tokens are JWTs (RFC 9068) with `aud` = `identifier` and live `accessTokenTtlSeconds` (60 to 86400, default 900). A scope without `roles` may be granted to Members and Admins.',
        params: TenantSlugParams,
        body: CreateApiResourceBody,
        response: responses(ApiResourceEnvelope, {
          400: [],
          404: [],
          409: ['identifier_taken'],
        }),
      },
    },
    async (request) => createApiResource(deps, request.tenant.id, request.body, request.actor),
  )

  app.get(
    '/api-resources',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'listApiResources',
        tags,
        summary: 'List the API resources, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(ApiResourcePage, { 400: [], 404: [] }),
      },
    },
    async (request) => listApiResourcePage(deps, request.tenant.id, request.query),
  )

  app.get(
    '/api-resources/:id',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'getApiResource',
        tags,
        summary: 'Read an API resource',
        params: ResourceParams,
        response: responses(ApiResourceEnvelope, {
          400: [],
          404: ['not_found'],
        }),
      },
    },
    async (request) => getApiResource(deps, request.tenant.id, request.params.id),
  )

  app.patch(
    '/api-resources/:id',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'updateApiResource',
        tags,
        summary: 'Change an API resource',
        description: '`scopes`, when given, replaces the whole list.',
        params: ResourceParams,
        body: PatchApiResourceBody,
        response: responses(ApiResourceEnvelope, {
          400: [],
          404: ['not_found'],
          409: ['identifier_taken'],
        }),
      },
    },
    async (request) =>
      updateApiResource(deps, request.tenant.id, request.params.id, request.body, request.actor),
  )

  app.delete(
    '/api-resources/:id',
    {
      config: { auth: 'admin', permission: 'applications:write' },
      schema: {
        operationId: 'deleteApiResource',
        tags,
        summary: 'Delete an API resource (no new tokens are issued for it)',
        params: ResourceParams,
        response: responses(Ok, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      await deleteApiResource(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )
}
