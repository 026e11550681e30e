// GET permissions: the tenant permission catalogue (CONTRACT §17), for any signed-in user
// of the tenant or an API key.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { responses, TenantSlugParams } from '../../schemas.ts'
import { PERMISSION_CATALOGUE } from './permissions.ts'
import { PermissionList } from './schemas.ts'

export async function roleRoutes(fastify: FastifyInstance, _options: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Roles']

  app.get(
    '/permissions',
    {
      config: { auth: 'signedIn' },
      schema: {
        operationId: 'listPermissions',
        tags,
        summary: 'The tenant permissions that guard the admin API',
        description:
          'Fixed by the service. Each admin operation names the one it needs (`x-permission`); reading a kind of resource needs its `:write` or the matching `:read`. A caller holding none of them gets 403 `admin_required` on admin operations, one holding some but not the operation’s 403 `permission_required` with `details.permission`.',
        params: TenantSlugParams,
        response: responses(PermissionList, { 404: [] }),
      },
    },
    async () => ({ items: PERMISSION_CATALOGUE }),
  )
}
