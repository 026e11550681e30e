// GET captcha/challenge: the ALTCHA proof-of-work challenge of a tenant whose CAPTCHA is
// `altcha` (CONTRACT §21), public and counted per address; any other tenant: 404.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { responses, TenantSlugParams } from '../../schemas.ts'
import { altchaChallenge } from './altcha.ts'
import { AltchaChallenge } from './schemas.ts'

export async function captchaRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/captcha/challenge',
    {
      config: { rateLimit: { budget: 'tokenEndpoints', scope: 'captcha' } },
      schema: {
        operationId: 'getCaptchaChallenge',
        tags: ['Authentication'],
        summary: 'An ALTCHA proof-of-work challenge',
        description:
          "For a workspace whose `captcha.provider` is `altcha` (else 404 `not_found`): solve it (altcha-lib's `solveChallenge`, or the ALTCHA widget) and send the base64 of `{challenge, solution}` as `captchaToken`. Valid 5 minutes, one answer per challenge.",
        params: TenantSlugParams,
        response: responses(AltchaChallenge, { 404: ['not_found'] }),
      },
    },
    async (request, reply) => {
      if (request.tenant.captchaProvider !== 'altcha') fail('not_found')
      reply.header('cache-control', 'no-store')
      return altchaChallenge(deps, request.tenant.id)
    },
  )
}
