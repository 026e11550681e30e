// Liveness, readiness and the API description (SPEC capability 9; CONTRACT §2).
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { errorResponses } from '../../schemas.ts'
import { Health, OpenApiDocument, Ready } from './schemas.ts'

// The probes build their few fields themselves, so JSON.stringify writes them: a schema's
// serializer is compiled at its first use, the first after a start being the dearest
// (the shared components are read then): 60 ms that the first readiness probe would wait
// for (issue 10, start to ready). The schemas still describe them in the OpenAPI document.
const plainJson = () => (data: unknown) => JSON.stringify(data)

export async function serviceRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.get(
    '/health',
    {
      serializerCompiler: plainJson,
      schema: {
        operationId: 'getHealth',
        tags: ['Service'],
        summary: 'Liveness: the process answers',
        response: { 200: Health, ...errorResponses({ 400: [] }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/ready',
    {
      serializerCompiler: plainJson,
      schema: {
        operationId: 'getReadiness',
        tags: ['Service'],
        summary: 'Readiness: the database (and Redis, when configured) answer',
        response: { 200: Ready, ...errorResponses({ 400: [] }), 503: Ready },
      },
    },
    async (_request, reply) => {
      // A probe must answer within its own timeout, even while PostgreSQL is frozen.
      const database = await withTimeout(deps.database.ping(), 2000).then(
        () => 'ok' as const,
        () => 'failing' as const,
      )
      const redis = !deps.redis
        ? ('disabled' as const)
        : await withTimeout(deps.redis.ping(), 1000).then(
            () => 'ok' as const,
            () => 'failing' as const,
          )
      const ready = database === 'ok' && redis !== 'failing'
      reply.status(ready ? 200 : 503)
      return {
        status: ready ? ('ready' as const) : ('unavailable' as const),
        checks: { database, redis, replica: deps.reads.state() },
      }
    },
  )

  app.get(
    '/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['Service'],
        summary: 'This API description (OpenAPI 3.1)',
        response: { 200: OpenApiDocument, ...errorResponses({ 400: [] }) },
      },
    },
    async () => app.swagger(),
  )
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref()),
  ])
}
