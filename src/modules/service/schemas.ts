// Shapes of the service routes: liveness, readiness, the API description (SPEC capability
// 9; CONTRACT §2).
import { Type } from 'typebox'

export const Health = Type.Object({ status: Type.Literal('ok') })

export const Ready = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Object({
    database: Type.Union([Type.Literal('ok'), Type.Literal('failing')]),
    redis: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('disabled')]),
  }),
})

/** The OpenAPI document, whatever @fastify/swagger builds. */
export const OpenApiDocument = Type.Object({}, { additionalProperties: true })
