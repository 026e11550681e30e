// Invitations to an organization (CONTRACT §18): create, list and revoke
// (organizations:write), and accept (the invitee, signed in or new).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import {
  acceptInvitation,
  createInvitation,
  listInvitationPage,
  revokeInvitation,
} from './invitations.ts'
import {
  AcceptedInvitation,
  AcceptInvitationBody,
  CreatedInvitation,
  CreateInvitationBody,
  InvitationPage,
  InvitationParams,
  ListQuery,
  OrganizationParams,
} from './schemas.ts'

export async function organizationInvitationRoutes(
  fastify: FastifyInstance,
  { deps }: { deps: Deps },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Organizations']
  const config = { auth: 'admin' as const, permission: 'organizations:write' as const }

  app.post(
    '/organizations/:id/invitations',
    {
      config,
      schema: {
        operationId: 'createOrganizationInvitation',
        tags,
        summary: 'Invite an address to an organization (mailing the token unless told not to)',
        description:
          'One pending invitation per organization and address: a second revokes the first (OrganizationInvitationRevoked, `reason: "replaced"`). A name that is no organization role: 400 `validation` naming it. The mail names the organization and links the hosted page `/t/{tenantSlug}/organization-invite?token=`. Audit: OrganizationInvitationCreated.',
        params: OrganizationParams,
        body: CreateInvitationBody,
        response: responses(CreatedInvitation, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) =>
      createInvitation(
        deps,
        request.tenant,
        request.params.id,
        request.body,
        request.actor,
        request.permissions,
      ),
  )

  app.get(
    '/organizations/:id/invitations',
    {
      config,
      schema: {
        operationId: 'listOrganizationInvitations',
        tags,
        summary: 'List the invitations of an organization, oldest first, in every state',
        params: OrganizationParams,
        querystring: ListQuery,
        response: responses(InvitationPage, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) =>
      listInvitationPage(deps, request.tenant.id, request.params.id, request.query),
  )

  app.delete(
    '/organizations/:id/invitations/:invitationId',
    {
      config,
      schema: {
        operationId: 'revokeOrganizationInvitation',
        tags,
        summary: 'Revoke a pending invitation',
        description:
          'One already accepted or revoked: 400 `invalid_invite`. Audit: OrganizationInvitationRevoked (`reason: "admin"`).',
        params: InvitationParams,
        response: responses(Ok, { 400: ['invalid_invite'], 404: ['not_found'] }),
      },
    },
    async (request) => {
      const { id, invitationId } = request.params
      await revokeInvitation(deps, request.tenant.id, id, invitationId, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/organization-invitations/accept',
    {
      config: { auth: 'optionalUser', rateLimit: 'signup' },
      schema: {
        operationId: 'acceptOrganizationInvitation',
        tags,
        summary: 'Accept an invitation to an organization: signed in, or signing up',
        description:
          'With the invitee’s access token: its address must be the invited one (403 `invite_email_mismatch`; `password` must be left out). Without one, `password` signs the invited address up through auth/signup (its policies, hooks and verification apply: where the workspace requires a verified address, `session` is null and `verificationRequired` true; the membership is made at once). An unknown, used, revoked or expired token: 400 `invalid_invite`. Audit: OrganizationInvitationAccepted and OrganizationMemberAdded (`via: "invite"`; a member already gains the roles).',
        params: TenantSlugParams,
        body: AcceptInvitationBody,
        response: responses(AcceptedInvitation, {
          400: [
            'invalid_invite',
            'password_too_weak',
            'password_breached',
            'email_taken',
            'password_login_disabled',
          ],
          403: ['invite_email_mismatch', 'sso_required'],
          404: [],
        }),
      },
    },
    async (request) => {
      const principal = request.principal
      const userId = principal?.kind === 'user' ? principal.userId : null
      return acceptInvitation(deps, request.tenant, request.body, userId, request.actor)
    },
  )
}
