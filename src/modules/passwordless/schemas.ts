// Shapes of the passwordless routes (SPEC capability 3, endpoint notes 1-4; CONTRACT §5).
import { type Static, Type } from 'typebox'
import {
  AuthPolicy,
  Email,
  NotBothTotpAndRecoveryCode,
  RecoveryCode,
  RememberDeviceFields,
  ref,
  SixDigits,
} from '../../schemas.ts'
import { CaptchaToken, PublicCaptcha } from '../captcha/schemas.ts'

const AuthConfigComponent = Type.Object(
  {
    authPolicy: AuthPolicy,
    idpOauthEnabled: Type.Boolean(),
    passkeysEnabled: Type.Boolean(),
    requireVerifiedEmail: Type.Boolean(),
    captcha: PublicCaptcha,
  },
  { $id: 'AuthConfig', description: 'How the workspace signs in.' },
)
export const AuthConfig = ref(AuthConfigComponent)

export const RequestLoginCodeBody = Type.Object(
  { email: Email, captchaToken: Type.Optional(CaptchaToken) },
  { additionalProperties: false, examples: [{ email: 'ada@example.com' }] },
)

export const VerifyLoginCodeBody = Type.Object(
  {
    email: Email,
    code: SixDigits,
    totpCode: Type.Optional(SixDigits),
    recoveryCode: Type.Optional(RecoveryCode),
    ...RememberDeviceFields,
  },
  {
    additionalProperties: false,
    ...NotBothTotpAndRecoveryCode,
    examples: [{ email: 'ada@example.com', code: '318274' }],
  },
)
export type VerifyLoginCodeBody = Static<typeof VerifyLoginCodeBody>

/** The components of this module, registered by src/plugins/openapi.ts. */
export const passwordlessComponents = [AuthConfigComponent]
