// How other back ends check our access tokens (CONTRACT §10):
//   GET  /.well-known/jwks.json            public: the verifying keys as a JWK Set, so a
//                                          back end checks ES256/EdDSA tokens offline
//   POST /v1/{tenantSlug}/oauth/introspect  an API key of the tenant: RFC 7662, for back
//                                          ends that also want revocation to count
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { responses, TenantSlugParams } from '../../schemas.ts'
import { IntrospectBody, Introspection, JwkSet } from './schemas.ts'
import { introspect, jwks } from './service.ts'

/** Keys rotate by configuration and a restart; verifiers may keep the set five minutes. */
const JWKS_CACHE_CONTROL = 'public, max-age=300'

export async function jwksRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getJwks',
        tags: ['Tokens'],
        summary: 'The public keys that verify access tokens (JWK Set, RFC 7517)',
        description:
          'With `JWT_ALG` ES256 or EdDSA: every configured key, the signing key first, each with the `kid` tokens name in their header. With HS256: `{ "keys": [] }` (the secret is never published).',
        security: [],
        response: { 200: JwkSet },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', JWKS_CACHE_CONTROL)
      return jwks(deps)
    },
  )
}

export async function introspectionRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/oauth/introspect',
    {
      config: { auth: 'apiKey' },
      schema: {
        operationId: 'introspectToken',
        tags: ['Tokens'],
        summary: 'Whether an access token is active, and its claims (RFC 7662)',
        description:
          "Needs an API key of this tenant (a user's access token: 401 `invalid_api_key`); counts against the API key's administration budget. An expired, revoked, logged-out, other tenant's, badly signed or malformed token, and the token of a suspended or deleted user, answers exactly `{ \"active\": false }`. `role` is the user's current role, not the token's claim.",
        params: TenantSlugParams,
        body: IntrospectBody,
        response: responses(Introspection, 400, 401, 404, 429),
      },
    },
    async (request, reply) => {
      // RFC 7662 §2.2 answers carry the token's state: no cache may keep them.
      reply.header('cache-control', 'no-store')
      return introspect(deps, request.tenant.id, request.body.token)
    },
  )
}
