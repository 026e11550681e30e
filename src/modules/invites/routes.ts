// GET, POST invites and DELETE invites/{id} (an Admin or an API key: CONTRACT §4), and
// POST /v1/invites/accept, which is outside the tenant prefix: the token names the tenant.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams, TokenEnvelopeWithSlug } from '../../schemas.ts'
import { acceptInvite } from './accept.ts'
import {
  AcceptInviteBody,
  CreatedInvite,
  CreateInviteBody,
  InvitePage,
  InviteParams,
  ListInvitesQuery,
} from './schemas.ts'
import { createInvite, listInvitePage, revokeInvite } from './service.ts'

export async function inviteRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Invites']

  app.get(
    '/invites',
    {
      config: { auth: 'admin', permission: 'invites:write' },
      schema: {
        operationId: 'listInvites',
        tags,
        summary: 'List the invitations, newest first',
        description:
          'Pending and expired invitations; accepted and revoked ones only with `includeAccepted` and `includeRevoked`. Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: ListInvitesQuery,
        response: responses(InvitePage, { 400: [], 404: [] }),
      },
    },
    async (request) => listInvitePage(deps, request.tenant.id, request.query),
  )

  app.post(
    '/invites',
    {
      config: { auth: 'admin', permission: 'invites:write' },
      schema: {
        operationId: 'createInvite',
        tags,
        summary: 'Invite an address (the token is returned this once, and mailed)',
        description:
          'Defaults: role `Member`, ttlSeconds 604800 (60 to 2592000), sendEmail true. An address that belongs to an Active or Suspended user is 409 `already_member`; a Pending user (a passwordless sign-up that never finished) may be invited, and accepting takes that user over. A pending invitation for the same address is revoked by the new one. An API key cannot invite an Admin (403 `api_key_not_allowed`), nor can a user who is no Admin (403 `permission_required`). `roles` names custom tenant roles given on acceptance (audit UserRolesChanged, via `invite`); an unknown one is 400 `validation`; one with a permission or resource scope the inviter does not hold is 403 `permission_required` (no escalation).',
        params: TenantSlugParams,
        body: CreateInviteBody,
        response: responses(CreatedInvite, {
          400: [],
          403: ['api_key_not_allowed', 'permission_required'],
          404: [],
          409: ['already_member'],
        }),
      },
    },
    async (request) =>
      createInvite(
        deps,
        request.tenant,
        request.body,
        request.actor,
        request.baseRoleAuthority,
        request.permissions,
      ),
  )

  app.delete(
    '/invites/:id',
    {
      config: { auth: 'admin', permission: 'invites:write' },
      schema: {
        operationId: 'revokeInvite',
        tags,
        summary: 'Revoke an invitation',
        description:
          'Revoking a revoked invitation answers ok; an accepted one is 409 `invite_used`.',
        params: InviteParams,
        response: responses(Ok, {
          404: ['not_found'],
          409: ['invite_used'],
        }),
      },
    },
    async (request) => {
      await revokeInvite(deps, request.tenant.id, request.params.id, request.actor)
      return { ok: true as const }
    },
  )
}

export async function inviteAcceptRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/v1/invites/accept',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'acceptInvite',
        tags: ['Invites'],
        summary: 'Accept an invitation with its token and a new password, signed in',
        description:
          'Unknown or revoked token: 401 `invalid_invite`; expired: 401 `invite_expired`; accepted already: 409 `invite_used`; the address belongs to an Active or Suspended user by now: 409 `already_member`. A Pending user of the address becomes Active with the chosen password and the role of the invitation. An address whose domain has an enforced SSO connection is 403 `sso_required` (an invitation to the Admin role excepted): the invitee signs in through the connection, no user or session is made and the invitation stays unspent.',
        body: AcceptInviteBody,
        response: responses(TokenEnvelopeWithSlug, {
          400: ['password_too_weak', 'password_breached'],
          401: ['invalid_invite', 'invite_expired'],
          403: ['sso_required'],
          409: ['invite_used', 'already_member'],
        }),
      },
    },
    async (request) => {
      return acceptInvite(deps, request.body, request.actor)
    },
  )
}
