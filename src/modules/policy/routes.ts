// POST policy/dry-run (CONTRACT §21): an admin's token or an API key holding tenant:read.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { responses, TenantSlugParams } from '../../schemas.ts'
import { DryRunBody, DryRunResult } from './schemas.ts'
import { dryRun } from './service.ts'

export async function policyRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/policy/dry-run',
    {
      config: { auth: 'admin', permission: 'tenant:read' },
      schema: {
        operationId: 'dryRunPolicy',
        tags: ['Tenants'],
        summary: 'What proposed sign-in settings would do, changing nothing',
        description:
          'Reads the UserLogin events of the last `sinceDays` days (1 to 90, default 30) and today’s users, and answers how the proposed settings (an omitted one is today’s) would treat each Active user who signed in: `sso_redirect` (an enforced domain, Admins excepted), `blocked` (`password_login_disabled`, `passwordless_disabled`, `email_not_verified`), `password_change_needed` (`password_breached`) or `second_factor_needed` (`mfa_not_enrolled`); the first that applies, in the order of the sign-in. Nothing is saved or audited (docs/security-model.md, Policy dry-run).',
        params: TenantSlugParams,
        body: DryRunBody,
        response: responses(DryRunResult, { 400: [], 404: [] }),
      },
    },
    async (request) => dryRun(deps, request.tenant, request.body),
  )
}
