// oauth/idp/credentials (PUT, DELETE), oauth/idp/start, oauth/idp/callback.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../../deps.ts'
import { readCookies } from '../../../lib/cookies.ts'
import { fail } from '../../../lib/errors.ts'
import { deviceTokenOf } from '../../../lib/host-cookie.ts'
import { Ok, responses, TenantSlugParams, TokenEnvelope } from '../../../schemas.ts'
import { AuthorizationStart, CallbackQuery, CredentialsBody } from './schemas.ts'
import {
  deleteCredentials,
  finishSignIn,
  isPagesDriven,
  notePendingSecondFactor,
  saveCredentials,
  startSignIn,
} from './service.ts'

export async function oauthRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { idp } = deps

  app.put(
    '/oauth/idp/credentials',
    {
      config: { auth: 'adminUser', permission: 'tenant:write' },
      schema: {
        operationId: 'setIdpCredentials',
        tags: ['Identity-provider OAuth'],
        summary: "Store the tenant's client credentials and enable hosted sign-in",
        description: 'The secret is stored encrypted; only `hasIdpClientSecret` is ever shown.',
        params: TenantSlugParams,
        body: CredentialsBody,
        response: responses(Ok, { 400: [], 404: [] }),
      },
    },
    async (request) => {
      await saveCredentials(deps, request.tenant, request.body, request.actor)
      return { ok: true as const }
    },
  )

  app.delete(
    '/oauth/idp/credentials',
    {
      config: { auth: 'adminUser', permission: 'tenant:write' },
      schema: {
        operationId: 'deleteIdpCredentials',
        tags: ['Identity-provider OAuth'],
        summary: "Remove the tenant's client credentials and disable hosted sign-in",
        params: TenantSlugParams,
        response: responses(Ok, { 404: [] }),
      },
    },
    async (request) => {
      await deleteCredentials(deps, request.tenant, request.actor)
      return { ok: true as const }
    },
  )

  app.get(
    '/oauth/idp/start',
    {
      schema: {
        operationId: 'startIdpSignIn',
        tags: ['Identity-provider OAuth'],
        summary: 'Begin hosted sign-in: the URL to send the browser to',
        description:
          'The URL carries a single-use `state` bound to this tenant (10 minutes), a PKCE S256 challenge and a nonce.',
        params: TenantSlugParams,
        response: responses(AuthorizationStart, {
          400: ['idp_not_configured'],
          404: [],
          503: ['unavailable'],
        }),
      },
    },
    async (request) => startSignIn(deps, idp, request.tenant, request.log),
  )

  app.get(
    '/oauth/idp/callback',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'finishIdpSignIn',
        tags: ['Identity-provider OAuth'],
        summary: 'Finish hosted sign-in: the provider redirects the browser here',
        description:
          'The provider refused (401 `idp_error`, with its `error`) or the exchange failed (401 `idp_exchange_failed`); an unknown, used or expired `state` is 400 `invalid_state`.',
        params: TenantSlugParams,
        querystring: CallbackQuery,
        response: responses(TokenEnvelope, {
          400: ['idp_not_configured', 'invalid_state', 'email_taken'],
          401: [
            'idp_error',
            'idp_exchange_failed',
            'invalid_credentials',
            'account_suspended',
            'mfa_required',
          ],
          404: [],
        }),
      },
    },
    async (request) => {
      const outcome = await finishSignIn(
        deps,
        idp,
        request.tenant,
        request.query,
        request.actor,
        request.log,
        // A browser the pages drove may hold a remembered device (CONTRACT §21).
        isPagesDriven(request)
          ? {
              deferSecondFactor: true,
              deviceToken: deviceTokenOf(
                readCookies(request),
                deps.config.publicUrl,
                request.tenant.slug,
              ),
            }
          : {},
      )
      if ('pendingSecondFactor' in outcome) {
        // The pages' hand-off (web/idp.ts) turns this into the second-factor page.
        notePendingSecondFactor(request, outcome.pendingSecondFactor)
        fail('mfa_required', { details: { methods: [] } })
      }
      return outcome
    },
  )
}
