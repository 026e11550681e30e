// Shapes of POST me/reauthenticate (CONTRACT §16): exactly one proof of a sign-in factor.
// Its passkey options answer the passkeys module's PasskeyRequestOptions component.
import { type Static, Type } from 'typebox'
import { Password, RecoveryCode, SixDigits } from '../../schemas.ts'
import { AuthenticationCredential } from '../passkeys/schemas.ts'

const PROOFS = ['password', 'totpCode', 'recoveryCode', 'code', 'response'] as const

// The `oneOf` branches only list required names, so stripping unknown properties never
// touches them (as InitialEnrollBody does).
export const ReauthenticateBody = Type.Object(
  {
    password: Type.Optional(Password),
    totpCode: Type.Optional(SixDigits),
    recoveryCode: Type.Optional(RecoveryCode),
    /** A login code from auth/request-login-code. */
    code: Type.Optional(SixDigits),
    /** AuthenticationResponseJSON for the options of POST me/reauthenticate/options. */
    response: Type.Optional(AuthenticationCredential),
  },
  {
    additionalProperties: false,
    oneOf: PROOFS.map((name) => ({ required: [name] })),
    examples: [
      { password: 'plum-voyage-fender-71' },
      { totpCode: '492039' },
      { recoveryCode: 'k7m2q-x4p3z' },
      { code: '318274' },
    ],
  },
)
export type ReauthenticateBody = Static<typeof ReauthenticateBody>
