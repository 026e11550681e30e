// GET audit: an Admin or an API key (CONTRACT §4).

import { Readable } from 'node:stream'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { errorResponses, responses } from '../../schemas.ts'
import {
  AuditEventPage,
  AuditExportLines,
  AuditExportQuery,
  AuditParams,
  AuditQuery,
} from './schemas.ts'
import { EXPORT_PAGE, exportAuditEvents, listAuditPage, SHORT_SEARCH_WINDOW } from './service.ts'

export async function auditRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/audit',
    {
      config: { auth: 'admin', permission: 'audit:read' },
      schema: {
        operationId: 'listAuditEvents',
        tags: ['Administration'],
        summary: 'The audit log, newest first',
        description: `Filters combine. \`before\` returns strictly older events; pages of \`limit\` (1 to 200, default 50), pass \`nextCursor\` as \`cursor\`. \`search\` matches the action, the email and the metadata text, case-insensitively. A search without three letters or digits in a row examines ${SHORT_SEARCH_WINDOW} events per page: its pages may be short, or empty, and still carry a \`nextCursor\`.`,
        params: AuditParams,
        querystring: AuditQuery,
        response: responses(AuditEventPage, { 400: [], 404: [] }),
      },
    },
    async (request) => listAuditPage(deps, request.tenant.id, request.query),
  )

  app.get(
    '/audit/export',
    {
      config: { auth: 'admin', permission: 'audit:read' },
      schema: {
        operationId: 'exportAuditEvents',
        tags: ['Administration'],
        summary: 'Every matching audit event, oldest first, as NDJSON',
        description: `One line per event, each exactly as the audit list shows it, oldest first, streamed: the service reads ${EXPORT_PAGE} events at a time as the client takes them, and stops when it disconnects. \`since\` is inclusive, \`until\` exclusive; both are ISO 8601 date-times.`,
        params: AuditParams,
        querystring: AuditExportQuery,
        response: {
          200: {
            description: 'The events, one JSON object per line.',
            content: { 'application/x-ndjson': { schema: AuditExportLines } },
          },
          ...errorResponses({ 400: [], 404: [] }),
        },
      },
    },
    async (request, reply) => {
      const { action, since, until } = request.query
      const lines = exportAuditEvents(deps, request.tenant.id, {
        action,
        since: since === undefined ? undefined : new Date(since),
        until: until === undefined ? undefined : new Date(until),
      })
      reply.type('application/x-ndjson')
      // The schema types the body as the text it is on the wire; a stream sends that text.
      return reply.send(Readable.from(lines) as never)
    },
  )
}
