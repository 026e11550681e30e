// Shapes of the password-reset and email-verification routes (CONTRACT §9).
import { type Static, Type } from 'typebox'
import {
  Email,
  NewPassword,
  NotBothTotpAndRecoveryCode,
  RecoveryCode,
  SixDigits,
  TokenEnvelope,
} from '../../schemas.ts'
import { CaptchaToken } from '../captcha/schemas.ts'
import { Me } from '../users/schemas.ts'

const SecondFactorFields = {
  totpCode: Type.Optional(SixDigits),
  recoveryCode: Type.Optional(RecoveryCode),
}

export const RequestPasswordResetBody = Type.Object(
  { email: Email, captchaToken: Type.Optional(CaptchaToken) },
  { additionalProperties: false, examples: [{ email: 'ada@example.com' }] },
)
export type RequestPasswordResetBody = Static<typeof RequestPasswordResetBody>

export const ResetPasswordBody = Type.Object(
  { email: Email, code: SixDigits, newPassword: NewPassword, ...SecondFactorFields },
  {
    additionalProperties: false,
    ...NotBothTotpAndRecoveryCode,
    examples: [
      { email: 'ada@example.com', code: '318274', newPassword: 'quartz-harbor-lantern-58' },
      {
        email: 'ada@example.com',
        code: '318274',
        newPassword: 'quartz-harbor-lantern-58',
        totpCode: '492039',
      },
    ],
  },
)
export type ResetPasswordBody = Static<typeof ResetPasswordBody>

export const RequestEmailVerificationBody = Type.Object(
  {
    // Without a token: the address to verify; with a token it is left out.
    email: Type.Optional(Email),
  },
  { additionalProperties: false, examples: [{}, { email: 'ada@example.com' }] },
)
export type RequestEmailVerificationBody = Static<typeof RequestEmailVerificationBody>

export const VerifyEmailBody = Type.Object(
  {
    // Without a token only.
    email: Type.Optional(Email),
    code: SixDigits,
    ...SecondFactorFields,
  },
  {
    additionalProperties: false,
    ...NotBothTotpAndRecoveryCode,
    examples: [{ code: '318274' }, { email: 'ada@example.com', code: '318274' }],
  },
)
export type VerifyEmailBody = Static<typeof VerifyEmailBody>

/** With a token: the current user (as GET /me); without: a new session. */
export const VerifyEmailResult = Type.Union([Me, TokenEnvelope], {
  description: 'With a token: the current user (as GET /me). Without: a new session.',
})
