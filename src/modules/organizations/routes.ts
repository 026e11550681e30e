// The organizations routes (CONTRACT §18): the organizations (organizations:write), their
// members, and the caller's own memberships. An organization and its member list are also
// readable by its members: those two routes take any signed-in user or API key and ask the
// service, which answers 404 to a caller that neither manages organizations nor belongs.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../lib/errors.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { effectivePermissions } from '../roles/permissions.ts'
import { findUserAccess } from '../users/reads.ts'
import {
  CreateOrganizationBody,
  ListQuery,
  MemberEnvelope,
  MemberPage,
  MemberParams,
  MemberRolesBody,
  MembershipList,
  OrganizationEnvelope,
  OrganizationPage,
  OrganizationParams,
  PatchOrganizationBody,
} from './schemas.ts'
import {
  createOrganization,
  deleteOrganization,
  listMemberPage,
  listOrganizationPage,
  myOrganizations,
  putMember,
  type Reader,
  readOrganization,
  removeMember,
  updateOrganization,
} from './service.ts'

const MEMBER_READS =
  'Needs `organizations:write`, or the caller being a member of the organization; anyone else (a user of another organization, of the same tenant or not) gets 404, as for an unknown id.'

export async function organizationRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Organizations']
  const config = { auth: 'admin' as const, permission: 'organizations:write' as const }

  /** The caller as a reader: an API key's permissions are its own; a user's read live. */
  async function reader(request: FastifyRequest): Promise<Reader> {
    if (request.principal?.kind !== 'user') {
      return { actor: request.actor, permissions: request.permissions }
    }
    const user = await findUserAccess(deps.db, request.tenant.id, request.principal.userId)
    if (user?.status !== 'Active') throw new AppError('session_revoked')
    return {
      actor: request.actor,
      permissions: effectivePermissions(user.role, user.rolePermissions),
    }
  }

  app.get(
    '/organizations',
    {
      config,
      schema: {
        operationId: 'listOrganizations',
        tags,
        summary: 'List the organizations of the tenant, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: ListQuery,
        response: responses(OrganizationPage, { 400: [], 404: [] }),
      },
    },
    async (request) => listOrganizationPage(deps, request.tenant.id, request.query),
  )

  app.post(
    '/organizations',
    {
      config,
      schema: {
        operationId: 'createOrganization',
        tags,
        summary: 'Create an organization',
        description:
          'An unknown organization role in `jit.roles` or a malformed domain: 400 `validation` naming it. A domain another organization of the tenant claims: 409 `domain_taken`. At most 10,000 organizations a tenant: 400 `limit_exceeded`. Audit: OrganizationCreated.',
        params: TenantSlugParams,
        body: CreateOrganizationBody,
        response: responses(OrganizationEnvelope, {
          400: ['limit_exceeded'],
          404: [],
          409: ['domain_taken'],
        }),
      },
    },
    async (request) => ({
      organization: await createOrganization(
        deps,
        request.tenant.id,
        request.body,
        request.actor,
        request.permissions,
      ),
    }),
  )

  app.get(
    '/organizations/:id',
    {
      config: { auth: 'signedIn' },
      schema: {
        operationId: 'getOrganization',
        tags,
        summary: 'Read an organization',
        description: MEMBER_READS,
        params: OrganizationParams,
        response: responses(OrganizationEnvelope, { 404: ['not_found'] }),
      },
    },
    async (request) => ({
      organization: await readOrganization(
        deps,
        request.tenant.id,
        request.params.id,
        await reader(request),
      ),
    }),
  )

  app.patch(
    '/organizations/:id',
    {
      config,
      schema: {
        operationId: 'updateOrganization',
        tags,
        summary: 'Change an organization (the fields sent replace its own)',
        description:
          'The rules of creation apply; `jit` replaces the domains and roles together. Audit: OrganizationUpdated naming the fields sent.',
        params: OrganizationParams,
        body: PatchOrganizationBody,
        response: responses(OrganizationEnvelope, {
          400: [],
          404: ['not_found'],
          409: ['domain_taken'],
        }),
      },
    },
    async (request) => ({
      organization: await updateOrganization(
        deps,
        request.tenant.id,
        request.params.id,
        request.body,
        request.actor,
        request.permissions,
      ),
    }),
  )

  app.delete(
    '/organizations/:id',
    {
      config,
      schema: {
        operationId: 'deleteOrganization',
        tags,
        summary: 'Delete an organization, its memberships and its invitations',
        description: 'Audit: OrganizationDeleted.',
        params: OrganizationParams,
        response: responses(Ok, { 404: ['not_found'] }),
      },
    },
    async (request) => {
      await deleteOrganization(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )

  app.get(
    '/organizations/:id/members',
    {
      config: { auth: 'signedIn' },
      schema: {
        operationId: 'listOrganizationMembers',
        tags,
        summary: 'List the members of an organization, oldest membership first',
        description: `Paged like every list. ${MEMBER_READS}`,
        params: OrganizationParams,
        querystring: ListQuery,
        response: responses(MemberPage, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) =>
      listMemberPage(
        deps,
        request.tenant.id,
        request.params.id,
        request.query,
        await reader(request),
      ),
  )

  app.put(
    '/organizations/:id/members/:userId',
    {
      config,
      schema: {
        operationId: 'setOrganizationMember',
        tags,
        summary: 'Add a user to an organization, or set a member’s organization roles',
        description:
          'The roles replace those the member held there. A name that is no organization role (unknown, or a tenant role): 400 `validation` naming it. An unknown organization or user: 404. Audit: OrganizationMemberAdded, or OrganizationMemberRolesChanged when a member’s roles change.',
        params: MemberParams,
        body: MemberRolesBody,
        response: responses(MemberEnvelope, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => ({
      member: await putMember(
        deps,
        request.tenant.id,
        request.params.id,
        request.params.userId,
        request.body.roles,
        request.actor,
        request.permissions,
      ),
    }),
  )

  app.delete(
    '/organizations/:id/members/:userId',
    {
      config,
      schema: {
        operationId: 'removeOrganizationMember',
        tags,
        summary: 'Remove a member from an organization',
        description: 'A user who is no member: 404. Audit: OrganizationMemberRemoved.',
        params: MemberParams,
        response: responses(Ok, { 404: ['not_found'] }),
      },
    },
    async (request) => {
      const { id, userId } = request.params
      await removeMember(deps, request.tenant.id, id, userId, request.actor)
      return { ok: true as const }
    },
  )

  app.get(
    '/me/organizations',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'listMyOrganizations',
        tags,
        summary: 'The organizations the signed-in user belongs to, with its roles there',
        params: TenantSlugParams,
        response: responses(MembershipList, { 404: [] }),
      },
    },
    async (request) => {
      const principal = request.principal
      if (principal?.kind !== 'user') throw new AppError('user_token_required')
      return myOrganizations(deps, request.tenant.id, principal.userId)
    },
  )
}
