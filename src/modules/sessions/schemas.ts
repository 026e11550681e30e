// Shapes of the sign-up, sign-in and session routes (SPEC, Authentication; CONTRACT §2 and §4).
import { type Static, Type } from 'typebox'
import { Email, NewPassword, OpaqueToken, Password, SixDigits } from '../../schemas.ts'

export const SignupBody = Type.Object(
  { email: Email, password: NewPassword },
  { additionalProperties: false },
)
export type SignupBody = Static<typeof SignupBody>

export const LoginBody = Type.Object(
  {
    email: Email,
    password: Password,
    totpCode: Type.Optional(SixDigits),
    emailOtpCode: Type.Optional(SixDigits),
  },
  { additionalProperties: false },
)
export type LoginBody = Static<typeof LoginBody>

export const RefreshBody = Type.Object(
  { refreshToken: OpaqueToken },
  { additionalProperties: false },
)

export const LogoutAllResult = Type.Object({ ok: Type.Literal(true), count: Type.Integer() })
