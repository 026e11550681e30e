// GET permissions (any signed-in user of the tenant or an API key), the roles routes and
// PUT users/{id}/roles (roles:write) (CONTRACT §17).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { Ok, PageQuery, PublicUser, responses, TenantSlugParams } from '../../schemas.ts'
import { findUserRecord } from '../users/reads.ts'
import { PERMISSION_CATALOGUE } from './permissions.ts'
import {
  CreateRoleBody,
  PatchRoleBody,
  PermissionList,
  RoleEnvelope,
  RolePage,
  RoleParams,
  UserRolesBody,
  UserRolesParams,
} from './schemas.ts'
import {
  type Caller,
  createRole,
  deleteRole,
  getRole,
  listRolePage,
  setUserRoles,
  updateRole,
} from './service.ts'

const caller = (request: FastifyRequest): Caller => ({
  actor: request.actor,
  permissions: request.permissions,
})

const NO_ESCALATION =
  'No escalation: a caller that does not hold every permission may create, change, delete, grant or take away only roles whose every permission and resource scope it holds itself (else 403 `permission_required`).'

export async function roleRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Roles']
  const config = { auth: 'admin' as const, permission: 'roles:write' as const }

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

  app.get(
    '/roles',
    {
      config,
      schema: {
        operationId: 'listRoles',
        tags,
        summary: 'List the roles: the built-ins, then the custom ones oldest first',
        description:
          'Paged like every list (`limit`, `cursor`, `nextCursor`). The first page (no `cursor`) holds the built-ins `Admin` (every permission and every resource scope) and `Member` (no permission; the resource scopes whose `roles` name Member), with `builtIn: true` and their name as `id`, ahead of up to `limit` custom roles; the later pages hold custom roles only. Follow `nextCursor` to read them all.',
        params: TenantSlugParams,
        querystring: PageQuery,
        response: responses(RolePage, { 404: [] }),
      },
    },
    async (request) => listRolePage(deps, request.tenant.id, request.query),
  )

  app.post(
    '/roles',
    {
      config,
      schema: {
        operationId: 'createRole',
        tags,
        summary: 'Create a custom role',
        description: `An unknown permission, resource or scope, a built-in's name (any case) or permissions on an organization role: 400 \`validation\` naming it. A name already used (ignoring case): 409 \`name_taken\`. At most 100 custom roles: 400 \`limit_exceeded\`. Audit: RoleCreated. ${NO_ESCALATION}`,
        params: TenantSlugParams,
        body: CreateRoleBody,
        response: responses(RoleEnvelope, {
          400: ['limit_exceeded'],
          404: [],
          409: ['name_taken'],
        }),
      },
    },
    async (request) => createRole(deps, request.tenant.id, request.body, caller(request)),
  )

  app.get(
    '/roles/:id',
    {
      config,
      schema: {
        operationId: 'getRole',
        tags,
        summary: 'Read a role (a built-in by its name)',
        params: RoleParams,
        response: responses(RoleEnvelope, { 404: ['not_found'] }),
      },
    },
    async (request) => getRole(deps, request.tenant.id, request.params.id),
  )

  app.patch(
    '/roles/:id',
    {
      config,
      schema: {
        operationId: 'updateRole',
        tags,
        summary: 'Change a custom role (the fields sent replace the role’s)',
        description: `The rules of creation apply; a built-in role: 403 \`builtin_role\`. Audit: RoleUpdated naming the changed fields. ${NO_ESCALATION}`,
        params: RoleParams,
        body: PatchRoleBody,
        response: responses(RoleEnvelope, {
          400: [],
          403: ['builtin_role'],
          404: ['not_found'],
          409: ['name_taken'],
        }),
      },
    },
    async (request) =>
      updateRole(deps, request.tenant.id, request.params.id, request.body, caller(request)),
  )

  app.delete(
    '/roles/:id',
    {
      config,
      schema: {
        operationId: 'deleteRole',
        tags,
        summary: 'Delete a custom role (every user holding it loses it)',
        description: `A built-in role: 403 \`builtin_role\`. Audit: RoleDeleted. ${NO_ESCALATION}`,
        params: RoleParams,
        response: responses(Ok, { 403: ['builtin_role'], 404: ['not_found'] }),
      },
    },
    async (request) => {
      await deleteRole(deps, request.tenant.id, request.params.id, caller(request))
      return { ok: true as const }
    },
  )

  app.put(
    '/users/:userId/roles',
    {
      config,
      schema: {
        operationId: 'setUserRoles',
        tags,
        summary: "Set a user's custom roles (by name; at most 50)",
        description: `Replaces the roles the user holds directly; answers the user. An unknown role name: 400 \`validation\` naming it. Audit: UserRolesChanged with the names added and removed (none when nothing changes). ${NO_ESCALATION}`,
        params: UserRolesParams,
        body: UserRolesBody,
        response: responses(PublicUser, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      const { userId } = request.params
      await setUserRoles(deps, request.tenant.id, userId, request.body, caller(request))
      const user = await findUserRecord(deps.db, request.tenant.id, userId)
      if (!user) fail('not_found')
      return user
    },
  )
}
