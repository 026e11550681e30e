// GET auth/config, POST auth/request-login-code, POST auth/verify-login-code.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams, TokenEnvelope } from '../../schemas.ts'
import { publicCaptcha } from '../captcha/settings.ts'
import { AuthConfig, RequestLoginCodeBody, VerifyLoginCodeBody } from './schemas.ts'
import { requestLoginCode, verifyLoginCode } from './service.ts'

export async function passwordlessRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/auth/config',
    {
      schema: {
        operationId: 'getAuthConfig',
        tags: ['Authentication'],
        summary: 'How this workspace signs in',
        params: TenantSlugParams,
        response: responses(AuthConfig, { 404: [] }),
      },
    },
    async (request) => ({
      authPolicy: request.tenant.authPolicy as 'PasswordOnly',
      idpOauthEnabled: request.tenant.idpOauthEnabled,
      passkeysEnabled: request.tenant.passkeysEnabled,
      requireVerifiedEmail: request.tenant.requireVerifiedEmail,
      captcha: publicCaptcha(request.tenant),
    }),
  )

  app.post(
    '/auth/request-login-code',
    {
      config: { rateLimit: { budget: 'codeRequestsPerIp', scope: 'login' }, captcha: 'login_code' },
      schema: {
        operationId: 'requestLoginCode',
        tags: ['Authentication'],
        summary: 'Email a 6-digit sign-in code',
        description:
          'Always answers `{ok: true}`, whether or not the address has an account. A new code ' +
          'invalidates the previous one; codes are valid 10 minutes. Limits: 3 requests per ' +
          '15 minutes per address and 10 per minute per IP. 403 `passwordless_disabled` ' +
          'where the authPolicy is PasswordOnly.',
        params: TenantSlugParams,
        body: RequestLoginCodeBody,
        response: responses(Ok, {
          400: ['captcha_required', 'captcha_invalid'],
          403: ['passwordless_disabled'],
          404: [],
        }),
      },
    },
    async (request) => {
      await requestLoginCode(deps, request.tenant, request.body.email, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/auth/verify-login-code',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'verifyLoginCode',
        tags: ['Authentication'],
        summary: 'Sign in with an emailed code (and TOTP when the tenant asks for it)',
        description:
          '401 `invalid_code` for a wrong, expired, burned or superseded code and for an ' +
          'unknown address; the 5th wrong guess burns the code. When a second factor is ' +
          'needed: 401 `mfa_required` with `methods: ["totp"]` (repeat with `totpCode`; the ' +
          'code is not consumed; or with a `recoveryCode` instead of `totpCode`, not both), ' +
          'or `mfa_not_enrolled` (enrol with auth/totp/initial-enroll).',
        params: TenantSlugParams,
        body: VerifyLoginCodeBody,
        response: responses(TokenEnvelope, {
          400: [],
          401: ['invalid_code', 'mfa_required', 'mfa_not_enrolled', 'invalid_mfa_code'],
          403: ['passwordless_disabled', 'sso_required'],
          404: [],
        }),
      },
    },
    async (request) => verifyLoginCode(deps, request.tenant, request.body, request.actor),
  )
}
