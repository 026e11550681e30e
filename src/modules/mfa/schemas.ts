// Shapes of the MFA routes (SPEC, MFA and endpoint notes 4, 5 and 7; CONTRACT §5).
import { type Static, Type } from 'typebox'
import {
  Email,
  Password,
  RememberDeviceFields,
  ref,
  SixDigits,
  TokenEnvelopeComponent,
} from '../../schemas.ts'

const EnrolmentComponent = Type.Object(
  {
    secret: Type.String({ description: 'Base32, for manual entry' }),
    otpauthUri: Type.String(),
    qrCodeSvg: Type.String({ description: 'The otpauth URI as an SVG QR code' }),
  },
  { $id: 'TotpEnrolment', description: 'A pending TOTP secret, to confirm with a code.' },
)
export const Enrolment = ref(EnrolmentComponent)
export type Enrolment = Static<typeof Enrolment>

/** Ten codes, shown once (CONTRACT §9). */
const RecoveryCodeList = Type.Array(Type.String({ pattern: '^[a-z2-7]{5}-[a-z2-7]{5}$' }), {
  minItems: 10,
  maxItems: 10,
  description:
    'Ten single-use recovery codes, each accepted once instead of a TOTP code. Shown only now: the service keeps only their hashes.',
})

const TotpActivatedComponent = Type.Object(
  { ok: Type.Literal(true), recoveryCodes: RecoveryCodeList },
  { $id: 'TotpActivated', description: 'TOTP is active; the new recovery codes.' },
)
export const TotpActivated = ref(TotpActivatedComponent)

const RecoveryCodesComponent = Type.Object(
  { recoveryCodes: RecoveryCodeList },
  { $id: 'RecoveryCodes', description: 'New recovery codes; the previous ones no longer work.' },
)
export const RecoveryCodes = ref(RecoveryCodesComponent)

const TokenEnvelopeWithRecoveryCodesComponent = Type.Object(
  { ...TokenEnvelopeComponent.properties, recoveryCodes: RecoveryCodeList },
  {
    $id: 'TokenEnvelopeWithRecoveryCodes',
    description: 'A new session, and the recovery codes of the TOTP just activated.',
  },
)
export const TokenEnvelopeWithRecoveryCodes = ref(TokenEnvelopeWithRecoveryCodesComponent)

export const RegenerateRecoveryCodesBody = Type.Object(
  { totpCode: SixDigits },
  { additionalProperties: false, examples: [{ totpCode: '492039' }] },
)

export const TotpVerifyBody = Type.Object(
  { code: SixDigits },
  { additionalProperties: false, examples: [{ code: '492039' }] },
)

// SPEC note 4: exactly one of `password` or `loginCode`. The `oneOf` branches only list
// required names, so stripping unknown properties never touches them.
const firstFactor = {
  email: Email,
  password: Type.Optional(Password),
  loginCode: Type.Optional(SixDigits),
}
const exactlyOneFirstFactor = { oneOf: [{ required: ['password'] }, { required: ['loginCode'] }] }

const firstFactorExamples = [
  { email: 'ada@example.com', password: 'plum-voyage-fender-71' },
  { email: 'ada@example.com', loginCode: '318274' },
]

export const InitialEnrollBody = Type.Object(firstFactor, {
  additionalProperties: false,
  ...exactlyOneFirstFactor,
  examples: firstFactorExamples,
})
export type InitialEnrollBody = Static<typeof InitialEnrollBody>

// SPEC note 5 / CONTRACT §5: the authenticator code is accepted as `code` or `totpCode`.
export const InitialVerifyBody = Type.Object(
  {
    ...firstFactor,
    code: Type.Optional(SixDigits),
    totpCode: Type.Optional(SixDigits),
    // CONTRACT §21: the code just proved a second factor, so the device may be remembered.
    rememberDevice: RememberDeviceFields.rememberDevice,
  },
  {
    additionalProperties: false,
    allOf: [exactlyOneFirstFactor, { anyOf: [{ required: ['code'] }, { required: ['totpCode'] }] }],
    examples: firstFactorExamples.map((example) => ({ ...example, code: '492039' })),
  },
)

export const EmailOtpRequestBody = Type.Object(
  { email: Email, password: Password },
  {
    additionalProperties: false,
    examples: [{ email: 'ada@example.com', password: 'plum-voyage-fender-71' }],
  },
)
export type EmailOtpRequestBody = Static<typeof EmailOtpRequestBody>

/** The components of this module, registered by src/plugins/openapi.ts. */
export const mfaComponents = [
  EnrolmentComponent,
  TotpActivatedComponent,
  RecoveryCodesComponent,
  TokenEnvelopeWithRecoveryCodesComponent,
]
