// GET groups (paged) and PUT groups/{id}/roles (roles:write) (CONTRACT §17). The groups
// themselves are the directory's: SCIM creates, changes and deletes them.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { PageQuery, responses, TenantSlugParams } from '../../schemas.ts'
import { GroupEnvelope, GroupPage, GroupParams, GroupRolesBody } from './schemas.ts'
import { listGroupPage, presentGroup, setGroupRoles } from './service.ts'

export async function groupRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Roles']

  app.get(
    '/groups',
    {
      config: { auth: 'admin', permission: 'users:read' },
      schema: {
        operationId: 'listGroups',
        tags,
        summary: 'List the groups (provisioned by SCIM), oldest first, with their roles',
        description:
          'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`. Groups are created, renamed, filled and deleted by the directory through SCIM (`/scim/v2/{tenantSlug}/Groups`).',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(GroupPage, { 400: [], 404: [] }),
      },
    },
    async (request) => listGroupPage(deps, request.tenant.id, request.query),
  )

  app.put(
    '/groups/:id/roles',
    {
      config: { auth: 'admin', permission: 'roles:write' },
      schema: {
        operationId: 'setGroupRoles',
        tags,
        summary: "Set a group's custom roles (by name; at most 50): every member holds them",
        description:
          'Replaces the roles of the group; answers the group. An unknown role name: 400 `validation` naming it. Audit: GroupUpdated (`via: "admin"`, the role names added and removed) and UserRolesChanged (`via: "group"`) for each member whose roles changed. No escalation: a caller that does not hold every permission may give or take away only roles whose every permission and resource scope it holds itself (else 403 `permission_required`).',
        params: GroupParams,
        body: GroupRolesBody,
        response: responses(GroupEnvelope, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      const { id } = request.params
      const caller = { actor: request.actor, permissions: request.permissions }
      const view = await setGroupRoles(deps, request.tenant.id, id, request.body.roles, caller)
      return { group: presentGroup(view) }
    },
  )
}
