// Shapes of the passwordless routes (SPEC capability 3, endpoint notes 1-4; CONTRACT §5).
import { type Static, Type } from 'typebox'
import { AuthPolicy, Email, SixDigits } from '../../schemas.ts'

export const AuthConfig = Type.Object({ authPolicy: AuthPolicy, idpOauthEnabled: Type.Boolean() })

export const RequestLoginCodeBody = Type.Object({ email: Email }, { additionalProperties: false })

export const VerifyLoginCodeBody = Type.Object(
  { email: Email, code: SixDigits, totpCode: Type.Optional(SixDigits) },
  { additionalProperties: false },
)
export type VerifyLoginCodeBody = Static<typeof VerifyLoginCodeBody>
