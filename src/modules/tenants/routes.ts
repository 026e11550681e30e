// POST /v1/tenants: a tenant and its first admin, signed in.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { safeEqual } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import { responses, TokenEnvelopeWithSlug } from '../../schemas.ts'
import { CreateTenantBody } from './schemas.ts'
import { createTenant } from './service.ts'

export async function tenantRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/v1/tenants',
    {
      config: { rateLimit: 'tenantCreation' },
      schema: {
        operationId: 'createTenant',
        tags: ['Tenants'],
        summary: 'Create a tenant with its first admin',
        description:
          'When TENANT_CREATION_TOKEN is set, send it as `Authorization: Bearer <token>`; otherwise creation is open.',
        // Open, or with the creation token when the service is configured with one.
        security: [{}, { tenantCreationToken: [] }],
        body: CreateTenantBody,
        response: responses(TokenEnvelopeWithSlug, {
          400: ['invalid_slug', 'password_too_weak', 'email_taken'],
          401: ['tenant_creation_forbidden'],
          409: ['slug_taken'],
        }),
      },
      // The creation token is checked before the body is read.
      onRequest: async (request) => {
        const expected = deps.config.tenantCreationToken
        if (!expected) return
        const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? ''
        if (!safeEqual(given, expected)) fail('tenant_creation_forbidden')
      },
    },
    async (request) => createTenant(deps, request.body, request.actor),
  )
}
