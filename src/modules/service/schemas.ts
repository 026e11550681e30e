// Shapes of the service routes: liveness, readiness, the API description (SPEC capability
// 9; CONTRACT §2).
import { Type } from 'typebox'
import { ref } from '../../schemas.ts'

const HealthComponent = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'Health', description: 'The process answers.' },
)
export const Health = ref(HealthComponent)

const ReadinessComponent = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
    checks: Type.Object({
      database: Type.Union([Type.Literal('ok'), Type.Literal('failing')]),
      redis: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('disabled')]),
      replica: Type.Union(
        [
          Type.Literal('ok'),
          Type.Literal('lagging'),
          Type.Literal('down'),
          Type.Literal('disabled'),
        ],
        {
          description:
            'The read replica (DATABASE_READ_URL): lagging and down never fail readiness; reads then go to the primary.',
        },
      ),
    }),
  },
  { $id: 'Readiness', description: 'Whether the database (and Redis) answer, and the replica.' },
)
export const Ready = ref(ReadinessComponent)

/** The OpenAPI document, whatever @fastify/swagger builds. */
export const OpenApiDocument = Type.Object(
  {},
  { additionalProperties: true, description: 'This document (OpenAPI 3.1).' },
)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const serviceComponents = [HealthComponent, ReadinessComponent]
