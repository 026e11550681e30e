// GET and DELETE me/sessions (Bearer), GET and DELETE users/{userId}/sessions (admin or
// API key): the sessions a user can see and end (CONTRACT §9).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { endOwnSession, endUserSession, listSessionPage, requireUser } from './manage.ts'
import {
  ListSessionsQuery,
  OwnSessionParams,
  SessionPage,
  UserSessionParams,
  UserSessionsParams,
} from './schemas.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

const PAGING =
  'Newest first, in pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.'

export async function sessionManagementRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/me/sessions',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'listMySessions',
        tags: ['Current user'],
        summary: "The signed-in user's live sessions (signed-in devices)",
        description: `${PAGING} \`current\` marks the session of the token that asks; \`lastUsedAt\`, \`ip\` and \`userAgent\` are those of the last sign-in or refresh.`,
        params: TenantSlugParams,
        querystring: ListSessionsQuery,
        response: responses(SessionPage, { 400: [], 404: [] }),
      },
    },
    async (request) => {
      const { userId, sessionId } = request.principal as UserPrincipal
      return listSessionPage(deps, request.tenant.id, userId, request.query, sessionId)
    },
  )

  app.delete(
    '/me/sessions/:id',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'endMySession',
        tags: ['Current user'],
        summary: 'End one of your sessions (signs that device out)',
        description:
          "Its access tokens are refused within seconds and its refresh token at once. Ending the session you sign in with acts as logout. Another user's, an ended or an unknown session: 404 `not_found`.",
        params: OwnSessionParams,
        response: responses(Ok, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await endOwnSession(deps, request.tenant, principal, request.params.id, request.actor)
      return { ok: true as const }
    },
  )

  app.get(
    '/users/:userId/sessions',
    {
      config: { auth: 'admin', permission: 'users:read' },
      schema: {
        operationId: 'listUserSessions',
        tags: ['Administration'],
        summary: "A user's live sessions",
        description: `${PAGING} \`current\` is always false. An unknown user: 404 \`not_found\`.`,
        params: UserSessionsParams,
        querystring: ListSessionsQuery,
        response: responses(SessionPage, {
          400: [],
          404: ['not_found'],
        }),
      },
    },
    async (request) => {
      const { userId } = request.params
      await requireUser(deps, request.tenant.id, userId)
      return listSessionPage(deps, request.tenant.id, userId, request.query)
    },
  )

  app.delete(
    '/users/:userId/sessions/:id',
    {
      config: { auth: 'admin', permission: 'users:write' },
      schema: {
        operationId: 'endUserSession',
        tags: ['Administration'],
        summary: "End one of a user's sessions",
        description:
          'Its access tokens are refused within seconds and its refresh token at once. An unknown user, or a session that is not a live one of this user: 404 `not_found`.',
        params: UserSessionParams,
        response: responses(Ok, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      const { userId, id } = request.params
      await endUserSession(deps, request.tenant, userId, id, request.actor)
      return { ok: true as const }
    },
  )
}
