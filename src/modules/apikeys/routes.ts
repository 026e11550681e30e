// GET, POST api-keys and DELETE api-keys/{id}: an Admin's access token only (CONTRACT §4:
// an API key is refused here with 403 api_key_not_allowed, so a leaked key cannot mint
// or revoke keys).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import {
  ApiKeyPage,
  ApiKeyParams,
  CreateApiKeyBody,
  CreatedApiKey,
  ListApiKeysQuery,
} from './schemas.ts'
import { createApiKey, listApiKeyPage, revokeApiKey } from './service.ts'

export async function apiKeyRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Administration']

  app.get(
    '/api-keys',
    {
      config: { auth: 'adminUser', permission: 'apikeys:write' },
      schema: {
        operationId: 'listApiKeys',
        tags,
        summary: 'List the API keys, newest first',
        description:
          'Revoked keys are hidden unless `includeRevoked` is true. Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`. `lastUsedAt` is written in batches and may lag up to 5 seconds behind uses served by another instance.',
        params: TenantSlugParams,
        querystring: ListApiKeysQuery,
        response: responses(ApiKeyPage, { 400: [], 404: [] }),
      },
    },
    async (request) => listApiKeyPage(deps, request.tenant.id, request.query),
  )

  app.post(
    '/api-keys',
    {
      config: { auth: 'adminUser', permission: 'apikeys:write' },
      schema: {
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key (the plaintext is returned this once)',
        description:
          'The key starts with `ak_live_` or `ak_test_` after its environment and is sent as `Authorization: Bearer <key>`. Without `expiresAt` it is valid until revoked.',
        params: TenantSlugParams,
        body: CreateApiKeyBody,
        response: responses(CreatedApiKey, { 400: [], 404: [] }),
      },
    },
    async (request) =>
      createApiKey(deps, request.tenant.id, request.body, request.actor, request.permissions),
  )

  app.delete(
    '/api-keys/:id',
    {
      config: { auth: 'adminUser', permission: 'apikeys:write' },
      schema: {
        operationId: 'revokeApiKey',
        tags,
        summary: 'Revoke an API key (refused from the next request on)',
        params: ApiKeyParams,
        response: responses(Ok, { 404: ['not_found'] }),
      },
    },
    async (request) => {
      await revokeApiKey(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )
}
