// Webhooks (CONTRACT §13): an Admin's token or an API key, as the applications routes.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, PageQuery, ResourceParams, responses, TenantSlugParams } from '../../schemas.ts'
import {
  CreateWebhookBody,
  DeliveryEnvelope,
  DeliveryPage,
  DeliveryParams,
  PatchWebhookBody,
  WebhookCreated,
  WebhookEnvelope,
  WebhookPage,
  WebhookSecret,
} from './schemas.ts'
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveryPage,
  listWebhookPage,
  retryDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from './service.ts'

const found = { 400: [], 404: ['not_found'] } as const
const any = { 400: [], 404: [] } as const

export async function webhookRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Webhooks']
  const config = { auth: 'admin' as const, permission: 'webhooks:write' as const }

  app.post(
    '/webhooks',
    {
      config,
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Register a webhook endpoint',
        description:
          'The endpoint receives the audit events it subscribes to, from now on, signed per Standard Webhooks with the returned `secret` (shown this once).',
        params: TenantSlugParams,
        body: CreateWebhookBody,
        response: responses(WebhookCreated, any),
      },
    },
    async (request) => createWebhook(deps, request.tenant.id, request.body, request.actor),
  )

  app.get(
    '/webhooks',
    {
      config,
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: 'List the webhooks, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(WebhookPage, any),
      },
    },
    async (request) => listWebhookPage(deps, request.tenant.id, request.query),
  )

  app.get(
    '/webhooks/:id',
    {
      config,
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'Read a webhook (never its secret)',
        params: ResourceParams,
        response: responses(WebhookEnvelope, found),
      },
    },
    async (request) => getWebhook(deps, request.tenant.id, request.params.id),
  )

  app.patch(
    '/webhooks/:id',
    {
      config,
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change a webhook',
        description: 'The rules of creation apply; enabling it again clears `failingSince`.',
        params: ResourceParams,
        body: PatchWebhookBody,
        response: responses(WebhookEnvelope, found),
      },
    },
    async (request) =>
      updateWebhook(deps, request.tenant.id, request.params.id, request.body, request.actor),
  )

  app.delete(
    '/webhooks/:id',
    {
      config,
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook and its deliveries',
        params: ResourceParams,
        response: responses(Ok, found),
      },
    },
    async (request) => {
      await deleteWebhook(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/webhooks/:id/secret',
    {
      config,
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'Replace the signing secret',
        description:
          'For 24 hours every delivery carries two signatures, with the new secret and the old one.',
        params: ResourceParams,
        response: responses(WebhookSecret, found),
      },
    },
    async (request) =>
      rotateWebhookSecret(deps, request.tenant.id, request.params.id, request.actor),
  )

  app.get(
    '/webhooks/:id/deliveries',
    {
      config,
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: 'List a webhook’s deliveries, oldest first',
        params: ResourceParams,
        querystring: PageQuery,
        response: responses(DeliveryPage, found),
      },
    },
    async (request) => listDeliveryPage(deps, request.tenant.id, request.params.id, request.query),
  )

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      config,
      schema: {
        operationId: 'retryWebhookDelivery',
        tags,
        summary: 'Send a delivery again now, with the same `webhook-id`',
        params: DeliveryParams,
        response: responses(DeliveryEnvelope, found),
      },
    },
    async (request) =>
      retryDelivery(deps, request.tenant.id, request.params.id, request.params.deliveryId),
  )

  app.post(
    '/webhooks/:id/test',
    {
      config,
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a `WebhookTest` event to this endpoint only',
        description: 'Listed in its deliveries; not audited.',
        params: ResourceParams,
        response: responses(DeliveryEnvelope, found),
      },
    },
    async (request) => sendTestEvent(deps, request.tenant.id, request.params.id),
  )
}
