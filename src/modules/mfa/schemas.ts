// Shapes of the MFA routes (SPEC, MFA and endpoint notes 4, 5 and 7; CONTRACT §5).
import { type Static, Type } from 'typebox'
import { Email, Password, SixDigits } from '../../schemas.ts'

export const Enrolment = Type.Object({
  secret: Type.String({ description: 'Base32, for manual entry' }),
  otpauthUri: Type.String(),
  qrCodeSvg: Type.String({ description: 'The otpauth URI as an SVG QR code' }),
})
export type Enrolment = Static<typeof Enrolment>

export const TotpVerifyBody = Type.Object({ code: SixDigits }, { additionalProperties: false })

// SPEC note 4: exactly one of `password` or `loginCode`. The `oneOf` branches only list
// required names, so stripping unknown properties never touches them.
const firstFactor = {
  email: Email,
  password: Type.Optional(Password),
  loginCode: Type.Optional(SixDigits),
}
const exactlyOneFirstFactor = { oneOf: [{ required: ['password'] }, { required: ['loginCode'] }] }

export const InitialEnrollBody = Type.Object(firstFactor, {
  additionalProperties: false,
  ...exactlyOneFirstFactor,
})
export type InitialEnrollBody = Static<typeof InitialEnrollBody>

// SPEC note 5 / CONTRACT §5: the authenticator code is accepted as `code` or `totpCode`.
export const InitialVerifyBody = Type.Object(
  { ...firstFactor, code: Type.Optional(SixDigits), totpCode: Type.Optional(SixDigits) },
  {
    additionalProperties: false,
    allOf: [exactlyOneFirstFactor, { anyOf: [{ required: ['code'] }, { required: ['totpCode'] }] }],
  },
)

export const EmailOtpRequestBody = Type.Object(
  { email: Email, password: Password },
  { additionalProperties: false },
)
export type EmailOtpRequestBody = Static<typeof EmailOtpRequestBody>
