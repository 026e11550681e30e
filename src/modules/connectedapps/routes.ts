// GET me/applications and DELETE me/applications/{clientId} (a user's token; CONTRACT §11,
// Consent): the applications the signed-in user has granted access to, and revoking one.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { ConnectedApplicationList, ConnectedApplicationParams } from './schemas.ts'
import { listConnectedApplications, revokeConnectedApplication } from './service.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

export async function connectedApplicationRoutes(
  fastify: FastifyInstance,
  { deps }: { deps: Deps },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/me/applications',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'listMyApplications',
        tags: ['Current user'],
        summary: 'The applications the signed-in user has granted access to',
        description:
          'One item per application of the tenant’s OpenID provider the user has signed in ' +
          'to or allowed (its consent page), with the scopes granted. Newest first.',
        params: TenantSlugParams,
        response: responses(ConnectedApplicationList, { 404: [] }),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      return listConnectedApplications(deps, request.tenant.id, userId)
    },
  )

  app.delete(
    '/me/applications/:clientId',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'revokeMyApplication',
        tags: ['Current user'],
        summary: 'Revoke an application’s access (its grant, codes and tokens)',
        description:
          'Deletes the grant with every authorization code, access token and refresh token ' +
          'issued under it, at once on every instance; the application must ask again. JWT ' +
          'access tokens for an API resource run out on their own. Audit ' +
          '`ApplicationConsentRevoked`. An application the user has no grant for (unknown, ' +
          'another user’s, another tenant’s): 404 `not_found`.',
        params: ConnectedApplicationParams,
        response: responses(Ok, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      const { clientId } = request.params
      await revokeConnectedApplication(deps, request.tenant.id, userId, clientId, request.actor)
      return { ok: true as const }
    },
  )
}
