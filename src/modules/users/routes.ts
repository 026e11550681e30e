// GET /me, DELETE /me, PATCH /me/password.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { changePassword, deleteOwnAccount } from './me.ts'
import { logoUrl, presentUser } from './present.ts'
import { findUserById } from './queries.ts'
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
      const { tenant } = request
      // One primary-key read; the tenant fields come from the tenant cache (2 s).
      const [user, hasLogo] = await Promise.all([
        findUserById(deps.db, tenant.id, userId),
        deps.tenants.hasLogo(tenant.id),
      ])
      if (!user) fail('session_revoked')
      return {
        ...presentUser(user),
        tenant: {
          id: tenant.id,
          slug: tenant.slug,
          name: tenant.name,
          plan: tenant.plan,
          mfaPolicy: tenant.mfaPolicy,
          authPolicy: tenant.authPolicy,
          logoUrl: logoUrl(deps.config, tenant.slug, hasLogo),
        },
      }
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
