// auth/signup, auth/login, auth/refresh, auth/logout, auth/logout-all.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams, TokenEnvelope } from '../../schemas.ts'
import { loginWithPassword, signup } from './password.ts'
import { LoginBody, LogoutAllResult, RefreshBody, SignupBody, SignupResult } from './schemas.ts'

export async function sessionRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/auth/signup',
    {
      config: { rateLimit: 'signup', captcha: 'sign_up' },
      schema: {
        operationId: 'signup',
        tags: ['Authentication'],
        summary: 'Create an account with email and password',
        description:
          'A PasswordlessOnly workspace refuses it (400 `password_login_disabled`); an address with an account is 400 `email_taken`; an address of a domain whose SSO connection is enforced is 403 `sso_required`. ' +
          'Where the workspace requires a verified address (requireVerifiedEmail), the account is created without a session: the answer is `{ ok: true, verificationRequired: true }` and a 6-digit code is mailed for auth/verify-email.',
        params: TenantSlugParams,
        body: SignupBody,
        response: responses(SignupResult, {
          400: [
            'password_too_weak',
            'password_breached',
            'email_taken',
            'password_login_disabled',
            'captcha_required',
            'captcha_invalid',
          ],
          403: ['sso_required'],
          404: [],
        }),
      },
    },
    async (request) => signup(deps, request.tenant, request.body, request.actor),
  )

  app.post(
    '/auth/login',
    {
      config: { captcha: 'sign_in' },
      schema: {
        operationId: 'login',
        tags: ['Authentication'],
        summary: 'Sign in with email and password (and a second factor when asked)',
        description:
          'When the policy asks a second factor: 401 `mfa_required` with `details.methods` (repeat with `totpCode`, or with `emailOtpCode` after auth/request-email-otp). A user with TOTP may send a `recoveryCode` instead of `totpCode` (both: 400 `validation`; wrong or spent: 401 `invalid_mfa_code`). ' +
          'Where the workspace requires a verified address, the right password of an unverified one is 403 `email_not_verified` (verify with auth/request-email-verification and auth/verify-email).',
        params: TenantSlugParams,
        body: LoginBody,
        response: responses(TokenEnvelope, {
          400: ['captcha_required', 'captcha_invalid'],
          401: [
            'invalid_credentials',
            'account_suspended',
            'password_login_disabled',
            'mfa_required',
            'invalid_mfa_code',
          ],
          403: ['email_not_verified', 'sso_required'],
          404: [],
          429: ['rate_limited'],
        }),
      },
    },
    async (request) => loginWithPassword(deps, request.tenant, request.body, request.actor),
  )

  app.post(
    '/auth/refresh',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'refreshSession',
        tags: ['Authentication'],
        summary: 'Exchange a refresh token for a new pair (the old one is spent)',
        description:
          'A refresh token used twice ends its whole session (401 `refresh_token_reused`).',
        params: TenantSlugParams,
        body: RefreshBody,
        response: responses(TokenEnvelope, {
          400: [],
          401: ['token_invalid', 'token_expired', 'session_revoked', 'refresh_token_reused'],
          404: [],
        }),
      },
    },
    async (request) => {
      const { refreshToken } = request.body
      return deps.sessions.refresh(request.tenant, refreshToken, request.actor)
    },
  )

  app.post(
    '/auth/logout',
    {
      schema: {
        operationId: 'logout',
        tags: ['Authentication'],
        summary: 'End the session of a refresh token',
        description: 'Answers ok for an unknown or spent token too.',
        params: TenantSlugParams,
        body: RefreshBody,
        response: responses(Ok, { 400: [], 404: [] }),
      },
    },
    async (request) => {
      const { refreshToken } = request.body
      await deps.sessions.logout(request.tenant, refreshToken, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/auth/logout-all',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'logoutAll',
        tags: ['Authentication'],
        summary: 'End every session of the signed-in user',
        params: TenantSlugParams,
        response: responses(LogoutAllResult, { 404: [] }),
      },
    },
    async (request) => {
      const count = await deps.sessions.logoutAll(request.tenant, request.actor)
      return { ok: true as const, count }
    },
  )
}
