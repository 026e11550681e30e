// GET users, DELETE users/{userId}, PATCH users/{userId}, POST users/{userId}/totp/disable,
// POST users/{userId}/unlock
// (admin or API key: CONTRACT §4).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, PublicUser, responses, TenantSlugParams } from '../../schemas.ts'
import {
  deleteUser,
  disableUserTotp,
  impersonateUser,
  listUserPage,
  unlockUser,
  updateUserAccess,
} from './admin-service.ts'
import {
  ImpersonateBody,
  Impersonation,
  ListUsersQuery,
  TotpParams,
  UserPage,
  UserParams,
  UserPatchBody,
} from './schemas.ts'

export async function userAdminRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Administration']

  app.get(
    '/users',
    {
      config: { auth: 'admin', permission: 'users:read' },
      schema: {
        operationId: 'listUsers',
        tags,
        summary: 'List the users, oldest first',
        description: 'Pages of `limit` (1 to 200, default 50); pass `nextCursor` as `cursor`.',
        params: TenantSlugParams,
        querystring: ListUsersQuery,
        response: responses(UserPage, { 400: [], 404: [] }),
      },
    },
    async (request) => listUserPage(deps, request.tenant.id, request.query),
  )

  app.delete(
    '/users/:userId',
    {
      config: { auth: 'admin', permission: 'users:write' },
      schema: {
        operationId: 'deleteUser',
        tags,
        summary: 'Delete a user (soft delete: every session ends, the address is freed)',
        description:
          'The user is removed for good after the retention period (USER_RETENTION_DAYS). The last active Admin cannot be deleted (403 `last_admin`).',
        params: UserParams,
        response: responses(Ok, {
          400: [],
          403: ['last_admin'],
          404: ['not_found'],
        }),
      },
    },
    async (request) => {
      await deleteUser(deps, request.tenant.id, request.params.userId, request.actor)
      return { ok: true as const }
    },
  )

  app.patch(
    '/users/:userId',
    {
      config: { auth: 'admin', permission: 'users:write' },
      schema: {
        operationId: 'updateUser',
        tags,
        summary: "Change a user's role or profile, or suspend and reactivate the user",
        description:
          'Only the fields sent change; `null` clears a profile field (`displayName`, `givenName`, `familyName` 1..200 characters, `externalId` 1..256; `externalId` need not be unique). Audit: UserUpdated naming the changed fields. Suspending ends the sessions. The last active Admin can be neither demoted nor suspended (403 `last_admin`). Making a user an Admin, or an Admin a Member, is an Admin’s act (CONTRACT §17): anyone else holding `users:write` gets 403 `permission_required`, nothing changed; an API key cannot set role `Admin` (403 `api_key_not_allowed`), and demotes an Admin only when it holds every permission (else 403 `api_key_not_allowed`).',
        params: UserParams,
        body: UserPatchBody,
        response: responses(PublicUser, {
          400: [],
          403: ['last_admin', 'api_key_not_allowed', 'permission_required'],
          404: ['not_found'],
        }),
      },
    },
    async (request) =>
      updateUserAccess(deps, request.tenant.id, request.params.userId, request.body, {
        actor: request.actor,
        baseRoleAuthority: request.baseRoleAuthority,
      }),
  )

  app.post(
    '/users/:userId/totp/disable',
    {
      config: { auth: 'admin', permission: 'users:write' },
      schema: {
        operationId: 'disableUserTotp',
        tags,
        summary: "Reset a user's TOTP (the user's sessions end, the recovery codes go)",
        params: TotpParams,
        response: responses(Ok, { 404: ['not_found'] }),
      },
    },
    async (request) => {
      await disableUserTotp(deps, request.tenant, request.params.userId, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/users/:userId/unlock',
    {
      config: { auth: 'admin', permission: 'users:write' },
      schema: {
        operationId: 'unlockUser',
        tags,
        summary: "End a user's sign-in failure lock (CONTRACT §21)",
        description:
          'The account’s run of failed sign-ins (the `ACCOUNT_FAILURES` budget of CONTRACT §6) is forgotten, so the user can sign in at once, and `lockedUntil` is cleared; answers the user. Audited `UserUnlocked` (`wasLocked` says whether a lock held). An unknown user is 404.',
        params: UserParams,
        response: responses(PublicUser, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => unlockUser(deps, request.tenant.id, request.params.userId, request.actor),
  )

  app.post(
    '/users/:userId/impersonate',
    {
      // A person's act, never a key's (403 api_key_not_allowed), nor one made while
      // impersonating.
      config: { auth: 'adminUser', permission: 'users:impersonate', refusedToImpersonation: true },
      schema: {
        operationId: 'impersonateUser',
        tags,
        summary: 'Sign in as a user, for at most 15 minutes (CONTRACT §22)',
        description:
          'An access token for the user carrying `act: {sub: <your id>}`, without a refresh token. Not of an Admin, of yourself, of a user who is not Active or of one holding a permission you lack (403 `impersonation_forbidden`). The session cannot change the password or factors or delete the account. Audited `UserImpersonated` with the reason, in both people’s exports.',
        params: UserParams,
        body: ImpersonateBody,
        response: responses(Impersonation, {
          400: [],
          403: ['impersonation_forbidden'],
          404: ['not_found'],
        }),
      },
    },
    async (request) =>
      impersonateUser(deps, request.tenant, request.params.userId, request.body.reason, {
        actor: request.actor,
        permissions: request.permissions,
      }),
  )
}
