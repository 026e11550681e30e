// POST me/export (a user token) and POST users/{userId}/erase (an Admin's token or an API
// key): personal data (CONTRACT §9).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { UserParams } from '../users/schemas.ts'
import { eraseUser } from './erasure.ts'
import { exportPersonalData } from './export.ts'
import { PersonalDataExport } from './schemas.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

export async function privacyRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/me/export',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'exportPersonalData',
        tags: ['Current user'],
        summary: 'Everything the service holds about the signed-in user',
        description:
          'The account, its sessions (live and ended, the newest 1,000), linked identities, passkeys, how many recovery codes are left and its audit events (about it or made by it, the newest 10,000); the `X-Export-Truncated` header names a list that was cut (`sessions`, `auditEvents`). No hash, secret or code. Five exports per hour per user (`RATE_LIMIT_DATA_EXPORTS`), then 429. Audit: GdprExportRequested, GdprExportCompleted. An API key is refused (401 `user_token_required`).',
        params: TenantSlugParams,
        response: responses(PersonalDataExport, { 404: [], 429: ['rate_limited'] }),
      },
    },
    async (request, reply) => {
      const { userId } = request.principal as UserPrincipal
      const { data, truncated } = await exportPersonalData(
        deps,
        request.tenant.id,
        userId,
        request.actor,
      )
      // The body keeps exactly CONTRACT §9's keys; a cut list is said in a header.
      const cut = Object.entries(truncated).filter(([, was]) => was)
      if (cut.length > 0) reply.header('x-export-truncated', cut.map(([list]) => list).join(', '))
      return data
    },
  )

  app.post(
    '/users/:userId/erase',
    {
      config: { auth: 'admin', permission: 'users:write' },
      schema: {
        operationId: 'eraseUser',
        tags: ['Administration'],
        summary: 'Erase a user for good (GDPR): the account and its data, at once',
        description:
          "The user (live or soft-deleted) is deleted with its sessions, refresh tokens, codes, linked identities, passkeys and recovery codes; its audit events stay, without the address, ip or user agent; pending invitations to the address are revoked; the address may sign up again. When live sessions end, the answer waits about two seconds so that every instance refuses their access tokens first. The last active Admin cannot be erased (403 `last_admin`); an unknown or other tenant's user is 404 `not_found`. Audit: GdprErasureRequested, GdprErasureCompleted (the user by id only).",
        params: UserParams,
        response: responses(Ok, {
          400: [],
          403: ['last_admin'],
          404: ['not_found'],
        }),
      },
    },
    async (request) => {
      await eraseUser(deps, request.tenant.id, request.params.userId, request.actor)
      return { ok: true as const }
    },
  )
}
