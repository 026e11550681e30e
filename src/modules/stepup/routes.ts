// POST me/reauthenticate and POST me/reauthenticate/options (user token; CONTRACT §16).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { RequestOptions } from '../passkeys/schemas.ts'
import { ReauthenticateBody } from './schemas.ts'
import { reauthenticate, reauthenticationOptions } from './service.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

export async function stepUpRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/me/reauthenticate',
    {
      config: { auth: 'user', rateLimit: 'tokenEndpoints', refusedToImpersonation: true },
      schema: {
        operationId: 'reauthenticate',
        tags: ['Current user'],
        summary: 'Prove a sign-in factor again, for this session only',
        description:
          'Adding a passkey, beginning TOTP enrolment, removing a passkey and deleting the ' +
          'account need a sign-in or a reauthentication of the session within the last 10 ' +
          'minutes (else 401 `reauthentication_required`); a refresh does not count. Send ' +
          'exactly one of `password`, `totpCode`, `recoveryCode` (spent), `code` (a login ' +
          'code from auth/request-login-code, for users without a password) or `response` ' +
          '(a passkey assertion for the options of me/reauthenticate/options). Wrong: 401 ' +
          '`invalid_credentials` (password, passkey), `invalid_mfa_code` (TOTP or recovery ' +
          'code), `invalid_code` (login code); each counts as a failed sign-in in the ' +
          'failure budgets (429 `rate_limited` past them) and is audited as `UserLoginFailed`. ' +
          'A right `totpCode` or `recoveryCode` also marks the session as having proved a ' +
          'second factor, which an organization with `mfaRequired` asks of its tokens ' +
          '(CONTRACT §18).',
        params: TenantSlugParams,
        body: ReauthenticateBody,
        response: responses(Ok, {
          400: [],
          401: [
            'invalid_credentials',
            'invalid_mfa_code',
            'invalid_code',
            'account_suspended',
            'password_login_disabled',
          ],
          403: ['passkeys_disabled', 'passwordless_disabled', 'email_not_verified'],
          404: [],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await reauthenticate(deps, request.tenant, principal, request.body, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/me/reauthenticate/options',
    {
      config: {
        auth: 'user',
        rateLimit: {
          budget: 'tokenEndpoints',
          scope: 'passkey-reauthenticate',
        },
        refusedToImpersonation: true,
      },
      schema: {
        operationId: 'reauthenticationOptions',
        tags: ['Current user'],
        summary: 'Begin a passkey reauthentication: options for navigator.credentials.get',
        description:
          "`allowCredentials` lists the signed-in user's passkeys; the challenge is single " +
          'use, valid 5 minutes, and answers only me/reauthenticate of this user. 400 ' +
          '`validation` when the user has no passkey; 403 `passkeys_disabled` when the ' +
          'tenant turned passkeys off.',
        params: TenantSlugParams,
        response: responses(RequestOptions, {
          400: [],
          403: ['passkeys_disabled'],
          404: [],
        }),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      return reauthenticationOptions(deps, request.tenant, userId)
    },
  )
}
