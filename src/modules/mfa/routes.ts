// POST mfa/totp/enroll, mfa/totp/verify and mfa/recovery-codes/regenerate (Bearer); POST
// auth/totp/initial-enroll, auth/totp/initial-verify and auth/request-email-otp (no
// session yet).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import type { Principal } from '../../plugins/auth.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { requireRecentAuthentication } from '../stepup/recent.ts'
import { requestEmailOtp } from './email-otp.ts'
import { enrollSignedIn, initialEnroll, initialVerify, verifySignedIn } from './enrolment.ts'
import { regenerateRecoveryCodes } from './recovery.ts'
import {
  EmailOtpRequestBody,
  Enrolment,
  InitialEnrollBody,
  InitialVerifyBody,
  RecoveryCodes,
  RegenerateRecoveryCodesBody,
  TokenEnvelopeWithRecoveryCodes,
  TotpActivated,
  TotpVerifyBody,
} from './schemas.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

export async function mfaRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/mfa/totp/enroll',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'enrollTotp',
        tags: ['MFA'],
        summary: 'Begin TOTP enrolment: a new secret and its otpauth URI',
        description:
          'Activate it with mfa/totp/verify. Needs a sign-in or me/reauthenticate of this ' +
          'session within the last 10 minutes (401 `reauthentication_required`). 409 ' +
          '`already_enrolled` while TOTP is active.',
        params: TenantSlugParams,
        response: responses(Enrolment, {
          401: ['reauthentication_required'],
          404: [],
          409: ['already_enrolled'],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      await requireRecentAuthentication(deps, request.tenant.id, principal)
      return enrollSignedIn(deps, request.tenant, principal.userId)
    },
  )

  app.post(
    '/mfa/totp/verify',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'verifyTotp',
        tags: ['MFA'],
        summary: 'Finish TOTP enrolment with a code from the authenticator',
        description:
          'Answers ten recovery codes, shown only now (any older ones stop working); each is accepted once instead of a TOTP code.',
        params: TenantSlugParams,
        body: TotpVerifyBody,
        response: responses(TotpActivated, {
          400: [],
          401: ['invalid_mfa_code'],
          404: [],
          409: ['already_enrolled'],
        }),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      const recoveryCodes = await verifySignedIn(
        deps,
        request.tenant,
        userId,
        request.body.code,
        request.actor,
      )
      return { ok: true as const, recoveryCodes }
    },
  )

  app.post(
    '/mfa/recovery-codes/regenerate',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'regenerateRecoveryCodes',
        tags: ['MFA'],
        summary: 'Make ten new recovery codes (the old ones stop working)',
        description:
          'Needs a current code of the authenticator as `totpCode`. Without TOTP: 401 `mfa_not_enrolled`; a wrong code: 401 `invalid_mfa_code`, counted against the account like a failed sign-in (429 `rate_limited` past the budget).',
        params: TenantSlugParams,
        body: RegenerateRecoveryCodesBody,
        response: responses(RecoveryCodes, {
          400: [],
          401: ['mfa_not_enrolled', 'invalid_mfa_code'],
          404: [],
          429: ['rate_limited'],
        }),
      },
    },
    async (request) => {
      const { userId } = request.principal as UserPrincipal
      const recoveryCodes = await regenerateRecoveryCodes(
        deps,
        request.tenant,
        userId,
        request.body.totpCode,
        request.actor,
      )
      return { recoveryCodes }
    },
  )

  app.post(
    '/auth/totp/initial-enroll',
    {
      schema: {
        operationId: 'initialEnrollTotp',
        tags: ['MFA'],
        summary: 'Begin TOTP enrolment before the first sign-in',
        description:
          'For a user who must have TOTP but has none. Send exactly one of `password` or ' +
          '`loginCode` (a login code is checked here and spent by initial-verify).',
        params: TenantSlugParams,
        body: InitialEnrollBody,
        response: responses(Enrolment, {
          400: [],
          401: [
            'invalid_credentials',
            'invalid_code',
            'account_suspended',
            'password_login_disabled',
          ],
          403: ['mfa_disabled', 'passwordless_disabled', 'email_not_verified', 'sso_required'],
          404: [],
          409: ['already_enrolled'],
          429: ['rate_limited'],
        }),
      },
    },
    async (request) => initialEnroll(deps, request.tenant, request.body, request.actor),
  )

  app.post(
    '/auth/totp/initial-verify',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        operationId: 'initialVerifyTotp',
        tags: ['MFA'],
        summary: 'Finish TOTP enrolment and sign in',
        description:
          'Exactly one of `password` or `loginCode`, and the authenticator code as `code` ' +
          '(or `totpCode`). The envelope adds ten recovery codes, shown only now.',
        params: TenantSlugParams,
        body: InitialVerifyBody,
        response: responses(TokenEnvelopeWithRecoveryCodes, {
          400: [],
          401: [
            'invalid_credentials',
            'invalid_code',
            'invalid_mfa_code',
            'account_suspended',
            'password_login_disabled',
          ],
          403: ['mfa_disabled', 'passwordless_disabled', 'email_not_verified', 'sso_required'],
          404: [],
          409: ['already_enrolled'],
        }),
      },
    },
    async (request) => {
      const { code, totpCode, ...rest } = request.body
      const authenticatorCode = (code ?? totpCode) as string
      return initialVerify(
        deps,
        request.tenant,
        { ...rest, code: authenticatorCode },
        request.actor,
      )
    },
  )

  app.post(
    '/auth/request-email-otp',
    {
      config: { rateLimit: { budget: 'codeRequestsPerIp', scope: 'mfa' } },
      schema: {
        operationId: 'requestEmailOtp',
        tags: ['MFA'],
        summary: 'Email a 6-digit code as the second factor of a password login',
        description:
          'The password is checked first. The code is valid 10 minutes; send it to auth/login ' +
          'as `emailOtpCode`.',
        params: TenantSlugParams,
        body: EmailOtpRequestBody,
        response: responses(Ok, {
          400: [],
          401: ['invalid_credentials', 'account_suspended', 'password_login_disabled'],
          403: ['email_not_verified'],
          404: [],
        }),
      },
    },
    async (request) => {
      await requestEmailOtp(deps, request.tenant, request.body, request.actor)
      return { ok: true as const }
    },
  )
}
