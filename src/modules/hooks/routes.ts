// Hooks (CONTRACT §21): an admin's token or an API key holding hooks:write.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, PageQuery, ResourceParams, responses, TenantSlugParams } from '../../schemas.ts'
import {
  CreateHookBody,
  HookCallList,
  HookCreated,
  HookEnvelope,
  HookPage,
  HookTestResult,
  PatchHookBody,
} from './schemas.ts'
import {
  createHook,
  deleteHook,
  getHook,
  listCalls,
  listHookPage,
  testHook,
  updateHook,
} from './service.ts'

const found = { 400: [], 404: ['not_found'] } as const

export async function hookRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Hooks']
  const config = { auth: 'admin' as const, permission: 'hooks:write' as const }

  app.post(
    '/hooks',
    {
      config,
      schema: {
        operationId: 'createHook',
        tags,
        summary: 'Register a blocking hook',
        description:
          'At most one hook per event: a second is 409 hook_exists. The service POSTs a Standard Webhooks-signed JSON body to `url` and waits for the answer (docs/webhooks-and-hooks.md). The `secret` is shown this once.',
        params: TenantSlugParams,
        body: CreateHookBody,
        response: responses(HookCreated, { 400: [], 404: [], 409: ['hook_exists'] }),
      },
    },
    async (request) => createHook(deps, request.tenant.id, request.body, request.actor),
  )

  app.get(
    '/hooks',
    {
      config,
      schema: {
        operationId: 'listHooks',
        tags,
        summary: 'List the hooks, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(HookPage, { 400: [], 404: [] }),
      },
    },
    async (request) => listHookPage(deps, request.tenant.id, request.query),
  )

  app.get(
    '/hooks/:id',
    {
      config,
      schema: {
        operationId: 'getHook',
        tags,
        summary: 'Get a hook',
        params: ResourceParams,
        response: responses(HookEnvelope, found),
      },
    },
    async (request) => getHook(deps, request.tenant.id, request.params.id),
  )

  app.patch(
    '/hooks/:id',
    {
      config,
      schema: {
        operationId: 'updateHook',
        tags,
        summary: 'Change a hook',
        description: 'Its event cannot change: delete it and register another.',
        params: ResourceParams,
        body: PatchHookBody,
        response: responses(HookEnvelope, found),
      },
    },
    async (request) =>
      updateHook(deps, request.tenant.id, request.params.id, request.body, request.actor),
  )

  app.delete(
    '/hooks/:id',
    {
      config,
      schema: {
        operationId: 'deleteHook',
        tags,
        summary: 'Delete a hook',
        params: ResourceParams,
        response: responses(Ok, found),
      },
    },
    async (request) => {
      await deleteHook(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/hooks/:id/test',
    {
      config,
      schema: {
        operationId: 'testHook',
        tags,
        summary: 'Send a test call to a hook and answer what it came to',
        description:
          'A sample call of the hook’s event (its body marked `test: true`, about no user: docs/webhooks-and-hooks.md), enabled or not, by the path of a real call: signed, through the egress guard, within timeoutMs. Nothing rides on it: no one signs in, nothing is audited. Listed in the hook’s calls. A failure’s `error` is one of a few fixed phrases by the kind of failure, never the network library’s message (no address, port or certificate name). Ten test calls a minute per tenant, across its admins and API keys (`RATE_LIMIT_HOOK_TEST_CALLS`, default `10/60`), then 429 `rate_limited` with `Retry-After`, and nothing is sent.',
        params: ResourceParams,
        response: responses(HookTestResult, found),
      },
    },
    async (request) => testHook(deps, request.tenant, request.params.id, request.log),
  )

  app.get(
    '/hooks/:id/calls',
    {
      config,
      schema: {
        operationId: 'listHookCalls',
        tags,
        summary: 'List a hook’s last calls, newest first',
        description:
          'The last 20, real and test: when, the outcome, how long, the HTTP status and why a call failed; never a body, a claim or who signed in.',
        params: ResourceParams,
        response: responses(HookCallList, found),
      },
    },
    async (request) => listCalls(deps, request.tenant.id, request.params.id),
  )
}
