// auth/request-password-reset, auth/reset-password, auth/request-email-verification,
// auth/verify-email (CONTRACT §9).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams, TokenEnvelope } from '../../schemas.ts'
import { requestPasswordReset, resetPassword } from './reset.ts'
import {
  RequestEmailVerificationBody,
  RequestPasswordResetBody,
  ResetPasswordBody,
  VerifyEmailBody,
  VerifyEmailResult,
} from './schemas.ts'
import { type Caller, requestEmailVerification, verifyEmail } from './verification.ts'

const CODE_RULES =
  'The code has 6 digits, is valid 10 minutes, is voided by a newer request and burned by ' +
  'the 5th wrong guess. Limits: 3 requests per 15 minutes per address and 10 per minute per IP.'

const SECOND_FACTOR =
  'A user with TOTP, where mfaPolicy is Optional or Required, also gives `totpCode` or ' +
  '`recoveryCode` (not both: 400 `validation`): without one 401 `mfa_required` with ' +
  '`methods: ["totp"]` (the code stays valid), a wrong one 401 `invalid_mfa_code`.'

export async function accountRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/auth/request-password-reset',
    {
      config: {
        rateLimit: { budget: 'codeRequestsPerIp', scope: 'reset' },
        captcha: 'password_reset',
      },
      schema: {
        operationId: 'requestPasswordReset',
        tags: ['Authentication'],
        summary: 'Email a 6-digit password reset code',
        description:
          'Always answers `{ok: true}`, whether or not the address has a usable account ' +
          `(unknown, deleted and suspended addresses are sent nothing). ${CODE_RULES} ` +
          '403 `password_login_disabled` where the authPolicy is PasswordlessOnly.',
        params: TenantSlugParams,
        body: RequestPasswordResetBody,
        response: responses(Ok, {
          400: ['captcha_required', 'captcha_invalid'],
          403: ['password_login_disabled'],
          404: [],
        }),
      },
    },
    async (request) => {
      await requestPasswordReset(deps, request.tenant, request.body.email, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/auth/reset-password',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'resetPassword',
        tags: ['Authentication'],
        summary: 'Choose a new password with an emailed reset code, and sign in',
        description:
          'Checked in this order: the body and the password rules (400 `password_too_weak`; ' +
          'the code is neither spent nor counted), the code (401 `invalid_code` for a wrong, ' +
          `expired, burned or superseded code and for an unknown address), the second factor. ${SECOND_FACTOR} ` +
          'On success the address is verified, a Pending user becomes Active, every earlier ' +
          'session ends and a new one is returned. 403 `password_login_disabled` where the ' +
          'authPolicy is PasswordlessOnly.',
        params: TenantSlugParams,
        body: ResetPasswordBody,
        response: responses(TokenEnvelope, {
          400: ['password_too_weak', 'password_breached'],
          401: ['invalid_code', 'mfa_required', 'invalid_mfa_code'],
          403: ['password_login_disabled', 'sso_required'],
          404: [],
        }),
      },
    },
    async (request) => resetPassword(deps, request.tenant, request.body, request.actor),
  )

  app.post(
    '/auth/request-email-verification',
    {
      config: { auth: 'optionalUser', rateLimit: { budget: 'codeRequestsPerIp', scope: 'verify' } },
      schema: {
        operationId: 'requestEmailVerification',
        tags: ['Authentication'],
        summary: 'Email a 6-digit code that verifies the address',
        description:
          "With a user token and body `{}`: the code goes to the signed-in user's address. " +
          'Without a token: to `email`, answered `{ok: true}` whether or not the address has ' +
          'a usable account. An address already verified is sent nothing. ' +
          CODE_RULES,
        params: TenantSlugParams,
        body: RequestEmailVerificationBody,
        response: responses(Ok, { 400: [], 404: [] }),
      },
    },
    async (request) => {
      const { tenant, body, actor } = request
      await requestEmailVerification(deps, tenant, caller(request), body, actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/auth/verify-email',
    {
      config: { auth: 'optionalUser', rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'verifyEmail',
        tags: ['Authentication'],
        summary: 'Verify the address with an emailed code',
        description:
          'With a user token, `{ code }`: answers the user as GET /me does. Without a token, ' +
          '`{ email, code }` signs in (the code is the email factor) and answers a token ' +
          `envelope. ${SECOND_FACTOR} A Pending user becomes Active. 401 \`invalid_code\` ` +
          'for a wrong, expired, burned or superseded code and for an unknown address.',
        params: TenantSlugParams,
        body: VerifyEmailBody,
        response: responses(VerifyEmailResult, {
          400: [],
          401: ['invalid_code', 'mfa_required', 'invalid_mfa_code'],
          403: ['sso_required'],
          404: [],
        }),
      },
    },
    async (request) => {
      const { tenant, body, actor } = request
      return verifyEmail(deps, tenant, caller(request), body, actor)
    },
  )
}

function caller(request: FastifyRequest): Caller {
  const p = request.principal
  return p?.kind === 'user' ? { userId: p.userId } : undefined
}
