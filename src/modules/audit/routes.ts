// GET audit: an Admin or an API key (CONTRACT §4).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { responses } from '../../schemas.ts'
import { AuditEventPage, AuditParams, AuditQuery } from './schemas.ts'
import { listAuditPage, SHORT_SEARCH_WINDOW } from './service.ts'

export async function auditRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/audit',
    {
      config: { auth: 'admin' },
      schema: {
        operationId: 'listAuditEvents',
        tags: ['Administration'],
        summary: 'The audit log, newest first',
        description: `Filters combine. \`before\` returns strictly older events; pages of \`limit\` (1 to 200, default 50), pass \`nextCursor\` as \`cursor\`. \`search\` matches the action, the email and the metadata text, case-insensitively. A search without three letters or digits in a row examines ${SHORT_SEARCH_WINDOW} events per page: its pages may be short, or empty, and still carry a \`nextCursor\`.`,
        params: AuditParams,
        querystring: AuditQuery,
        response: responses(AuditEventPage, { 400: [], 401: [], 403: [], 404: [], 429: [] }),
      },
    },
    async (request) => listAuditPage(deps, request.tenant.id, request.query),
  )
}
