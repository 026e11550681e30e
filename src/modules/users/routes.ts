// GET /me, PATCH /me, DELETE /me, DELETE /me/remembered-devices, PATCH /me/password (a
// change, with the current one) and POST /me/password (a first one, for an account without).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { forgetOwnDevices } from '../signin/remembered-devices.ts'
import { requireRecentAuthentication } from '../stepup/recent.ts'
import { setFirstPassword } from './first-password.ts'
import { changePassword, deleteOwnAccount, impersonator, readMe, updateMe } from './me.ts'
import {
  ChangePasswordBody,
  ForgottenDevices,
  Me,
  MePatchBody,
  SetPasswordBody,
} from './schemas.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

export async function meRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/me',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'getMe',
        tags: ['Current user'],
        summary: 'The signed-in user, with its tenant',
        params: TenantSlugParams,
        response: responses(Me, { 404: [] }),
      },
    },
    async (request) => {
      const { userId, impersonatedBy } = request.principal as UserPrincipal
      const me = await readMe(deps, request.tenant, userId)
      // CONTRACT §22: who acts, for the application's banner (an impersonation only).
      if (!impersonatedBy) return me
      return { ...me, impersonatedBy: await impersonator(deps, request.tenant, impersonatedBy) }
    },
  )

  app.patch(
    '/me',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'updateMe',
        tags: ['Current user'],
        summary: "Change the signed-in user's own settings (its locale)",
        description:
          'Only the fields sent change; `locale` is a supported locale (CONTRACT §20), `null` clears it ' +
          '(the pages then follow the browser). Audit: UserUpdated naming the changed fields, `via: "me"`.',
        params: TenantSlugParams,
        body: MePatchBody,
        response: responses(Me, { 400: [], 404: [] }),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      await updateMe(deps, request.tenant, userId, request.body, request.actor)
      return readMe(deps, request.tenant, userId)
    },
  )

  app.delete(
    '/me',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'deleteMe',
        tags: ['Current user'],
        summary: 'Delete the signed-in account (every session ends)',
        description:
          'Needs a sign-in or me/reauthenticate of this session within the last 10 minutes ' +
          '(401 `reauthentication_required`). The last active Admin cannot delete itself ' +
          '(403 `last_admin`).',
        params: TenantSlugParams,
        response: responses(Ok, {
          401: ['reauthentication_required'],
          403: ['last_admin'],
          404: [],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await requireRecentAuthentication(deps, request.tenant.id, principal)
      await deleteOwnAccount(deps, request.tenant, principal.userId, request.actor)
      return { ok: true as const }
    },
  )

  app.delete(
    '/me/remembered-devices',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'forgetRememberedDevices',
        tags: ['Current user'],
        summary: 'Forget every remembered device of the signed-in user',
        description:
          'CONTRACT §21: every `deviceToken` (and the hosted pages’ remembered-device cookie) of this user stops standing in for the second factor; the next sign-in on each device asks it again. Audited `RememberedDevicesForgotten`.',
        params: TenantSlugParams,
        response: responses(ForgottenDevices, { 404: [] }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      const count = await forgetOwnDevices(deps, request.tenant.id, principal.userId, request.actor)
      return { ok: true as const, count }
    },
  )

  app.patch(
    '/me/password',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'changePassword',
        tags: ['Current user'],
        summary: "Change the signed-in user's password (other sessions end)",
        description:
          'A wrong `currentPassword` is 401 `invalid_credentials` and counts like a failed sign-in.',
        params: TenantSlugParams,
        body: ChangePasswordBody,
        response: responses(Ok, {
          400: ['password_too_weak', 'password_breached'],
          401: ['invalid_credentials'],
          404: [],
          429: ['rate_limited'],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await changePassword(deps, request.tenant, principal, request.body, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/me/password',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'setPassword',
        tags: ['Current user'],
        summary: 'Set a first password for a signed-in user who has none (other sessions end)',
        description:
          'For an account made through a social connection, SSO, the identity provider or an emailed code (GET /me `hasPassword: false`); one with a password changes it with PATCH me/password (409 `password_exists`). It adds a way to sign in, so, as adding a passkey, it needs a session that proved a sign-in factor in the last 10 minutes (CONTRACT §16: else 401 `reauthentication_required`; me/reauthenticate proves one). The rules of a new password apply (400 `password_too_weak`, `password_breached`). 403 `password_login_disabled` where the authPolicy is PasswordlessOnly, `sso_required` for an address of an enforced SSO domain (Admins excepted). Audited `UserPasswordChanged` with `via: "set"`; a security alert is mailed.',
        params: TenantSlugParams,
        body: SetPasswordBody,
        response: responses(Ok, {
          400: ['password_too_weak', 'password_breached'],
          401: ['reauthentication_required'],
          403: ['password_login_disabled', 'sso_required'],
          404: [],
          409: ['password_exists'],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await setFirstPassword(deps, request.tenant, principal, request.body, request.actor)
      return { ok: true as const }
    },
  )
}
