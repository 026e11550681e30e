// GET /me, DELETE /me, PATCH /me/password.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { changePassword, deleteOwnAccount, readMe } from './me.ts'
import { ChangePasswordBody, Me } from './schemas.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

export async function meRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const security = [{ bearer: [] }]

  app.get(
    '/me',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Current user'],
        summary: 'The signed-in user, with its tenant',
        security,
        params: TenantSlugParams,
        response: responses(Me, 401, 404),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      return readMe(deps, request.tenant, userId)
    },
  )

  app.delete(
    '/me',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Current user'],
        summary: 'Delete the signed-in account (every session ends)',
        security,
        params: TenantSlugParams,
        response: responses(Ok, 401, 403, 404),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      await deleteOwnAccount(deps, request.tenant, userId, request.actor)
      return { ok: true as const }
    },
  )

  app.patch(
    '/me/password',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Current user'],
        summary: "Change the signed-in user's password (other sessions end)",
        security,
        params: TenantSlugParams,
        body: ChangePasswordBody,
        response: responses(Ok, 400, 401, 404, 429),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await changePassword(deps, request.tenant, principal, request.body, request.actor)
      return { ok: true as const }
    },
  )
}
