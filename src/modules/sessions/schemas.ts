// Shapes of the sign-up, sign-in and session routes (SPEC, Authentication; CONTRACT §2 and §4).
import { type Static, Type } from 'typebox'
import {
  Email,
  NewPassword,
  OpaqueToken,
  Password,
  ref,
  SixDigits,
  TokenEnvelope,
} from '../../schemas.ts'

export const SignupBody = Type.Object(
  { email: Email, password: NewPassword },
  {
    additionalProperties: false,
    examples: [{ email: 'ada@example.com', password: 'plum-voyage-fender-71' }],
  },
)
export type SignupBody = Static<typeof SignupBody>

export const LoginBody = Type.Object(
  {
    email: Email,
    password: Password,
    totpCode: Type.Optional(SixDigits),
    emailOtpCode: Type.Optional(SixDigits),
  },
  {
    additionalProperties: false,
    examples: [
      { email: 'ada@example.com', password: 'plum-voyage-fender-71' },
      { email: 'ada@example.com', password: 'plum-voyage-fender-71', totpCode: '492039' },
    ],
  },
)
export type LoginBody = Static<typeof LoginBody>

export const RefreshBody = Type.Object(
  { refreshToken: OpaqueToken },
  {
    additionalProperties: false,
    examples: [{ refreshToken: 'Yh4cN8vR2kP6tW0xB3mQ7sL1dF9gJ5zA2eU8iO4nC6r' }],
  },
)

const LogoutAllComponent = Type.Object(
  {
    ok: Type.Literal(true),
    count: Type.Integer({ description: 'How many sessions ended.' }),
  },
  { $id: 'LogoutAllResult', description: "Every one of the user's sessions ended." },
)
export const LogoutAllResult = ref(LogoutAllComponent)

const VerificationRequiredComponent = Type.Object(
  { ok: Type.Literal(true), verificationRequired: Type.Literal(true) },
  {
    $id: 'VerificationRequired',
    description:
      'The account was created, but the workspace requires a verified address: a code was ' +
      'mailed; auth/verify-email with `{ email, code }` signs in.',
  },
)

/** Signup: a new session, or (requireVerifiedEmail, CONTRACT §9) a code to verify first. */
export const SignupResult = Type.Union([TokenEnvelope, ref(VerificationRequiredComponent)], {
  description: 'A new session; or, where a verified address is required, a code to verify first.',
})

/** The components of this module, registered by src/plugins/openapi.ts. */
export const sessionComponents = [LogoutAllComponent, VerificationRequiredComponent]
