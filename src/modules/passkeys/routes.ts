// POST me/passkeys/registration-options, POST me/passkeys, GET me/passkeys,
// DELETE me/passkeys/{id} (user token); POST auth/passkey/options, auth/passkey/verify.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams, TokenEnvelope } from '../../schemas.ts'
import { requireRecentAuthentication } from '../stepup/recent.ts'
import {
  CreationOptions,
  Passkey,
  PasskeyList,
  PasskeyParams,
  RegisterBody,
  RequestOptions,
  SignInBody,
  SignInOptionsBody,
} from './schemas.ts'
import {
  listOwnPasskeys,
  registerPasskey,
  registrationOptions,
  removePasskey,
  requirePasskeys,
} from './service.ts'
import { signInOptions, signInWithPasskey } from './sign-in.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

const DISABLED = '403 `passkeys_disabled` when the tenant turned passkeys off.'
const RECENT =
  'Needs a sign-in or me/reauthenticate of this session within the last 10 minutes (401 ' +
  '`reauthentication_required`).'

export async function passkeyRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/me/passkeys/registration-options',
    {
      config: {
        auth: 'user',
        rateLimit: {
          budget: 'tokenEndpoints',
          scope: 'passkey-register',
        },
        refusedToImpersonation: true,
      },
      schema: {
        operationId: 'passkeyRegistrationOptions',
        tags: ['Passkeys'],
        summary: 'Begin registering a passkey: options for navigator.credentials.create',
        description:
          'The challenge is single use and valid 5 minutes. User verification is required; ' +
          `the user's passkeys are excluded. 400 \`validation\` when the account already ` +
          `holds 20 passkeys. ${RECENT} ${DISABLED}`,
        params: TenantSlugParams,
        response: responses(CreationOptions, {
          400: [],
          401: ['reauthentication_required'],
          403: ['passkeys_disabled'],
          404: [],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      requirePasskeys(request.tenant)
      await requireRecentAuthentication(deps, request.tenant.id, principal)
      return registrationOptions(deps, request.tenant, principal.userId)
    },
  )

  app.post(
    '/me/passkeys',
    {
      config: {
        auth: 'user',
        rateLimit: {
          budget: 'tokenEndpoints',
          scope: 'passkey-register',
        },
        refusedToImpersonation: true,
      },
      schema: {
        operationId: 'registerPasskey',
        tags: ['Passkeys'],
        summary: 'Finish registering a passkey with the authenticator’s response',
        description:
          'The response of navigator.credentials.create (RegistrationResponseJSON). 400 ' +
          '`validation` when it is malformed or does not verify (unknown, used or expired ' +
          'challenge, wrong origin or RP ID, no user verification); 409 `already_enrolled` ' +
          `when the credential is already registered. Audit \`PasskeyRegistered\`. ${RECENT} ` +
          DISABLED,
        params: TenantSlugParams,
        body: RegisterBody,
        response: responses(Passkey, {
          400: [],
          401: ['reauthentication_required'],
          403: ['passkeys_disabled'],
          404: [],
          409: ['already_enrolled'],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      requirePasskeys(request.tenant)
      await requireRecentAuthentication(deps, request.tenant.id, principal)
      const { userId } = principal
      return registerPasskey(deps, request.tenant, userId, request.body, request.actor)
    },
  )

  app.get(
    '/me/passkeys',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'listPasskeys',
        tags: ['Passkeys'],
        summary: "The signed-in user's passkeys",
        params: TenantSlugParams,
        response: responses(PasskeyList, { 404: [] }),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      return listOwnPasskeys(deps, request.tenant, userId)
    },
  )

  app.delete(
    '/me/passkeys/:id',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'deletePasskey',
        tags: ['Passkeys'],
        summary: 'Remove one of the signed-in user’s passkeys',
        description:
          '404 `not_found` for an unknown id or another user’s passkey. Works while ' +
          `passkeys are turned off. Audit \`PasskeyRemoved\`. ${RECENT}`,
        params: PasskeyParams,
        response: responses(Ok, {
          400: [],
          401: ['reauthentication_required'],
          404: ['not_found'],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await requireRecentAuthentication(deps, request.tenant.id, principal)
      const { userId } = principal
      await removePasskey(deps, request.tenant, userId, request.params.id, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/auth/passkey/options',
    {
      config: { rateLimit: { budget: 'tokenEndpoints', scope: 'passkey-options' } },
      schema: {
        operationId: 'passkeySignInOptions',
        tags: ['Passkeys'],
        summary: 'Begin a passkey sign-in: options for navigator.credentials.get',
        description:
          'Without `email`, `allowCredentials` is empty: the browser offers any discoverable ' +
          'passkey of this site. With `email`, exactly three credential ids for any address: ' +
          'its passkeys first (all of them when it has more), then decoys shaped like the ' +
          'tenant’s passkeys, stable per address, so an unknown address looks like a known ' +
          'one. The challenge is single use and ' +
          `valid 5 minutes. ${DISABLED}`,
        params: TenantSlugParams,
        body: SignInOptionsBody,
        response: responses(RequestOptions, {
          400: [],
          403: ['passkeys_disabled'],
          404: [],
        }),
      },
    },
    async (request) => signInOptions(deps, request.tenant, request.body.email),
  )

  app.post(
    '/auth/passkey/verify',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'passkeySignIn',
        tags: ['Passkeys'],
        summary: 'Sign in with a passkey (no second factor is asked)',
        description:
          'The response of navigator.credentials.get (AuthenticationResponseJSON). 401 ' +
          '`invalid_credentials` for an unknown credential, a bad signature, a used, expired ' +
          'or foreign challenge, a wrong origin or RP ID, no user verification, or a ' +
          'signature counter that went backwards; `account_suspended` for a suspended user. ' +
          `Counts in the sign-in failure budgets (429). ${DISABLED}`,
        params: TenantSlugParams,
        body: SignInBody,
        response: responses(TokenEnvelope, {
          400: [],
          401: ['invalid_credentials', 'account_suspended'],
          403: ['passkeys_disabled', 'sso_required'],
          404: [],
          429: ['rate_limited'],
        }),
      },
    },
    async (request) =>
      signInWithPasskey(deps, request.tenant, request.body.response, request.actor),
  )
}
