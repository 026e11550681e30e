// Shapes of the sign-up, sign-in and session routes (SPEC, Authentication; CONTRACT §2 and §4).
import { type Static, Type } from 'typebox'
import {
  DateTime,
  Email,
  NewPassword,
  NotBothTotpAndRecoveryCode,
  OpaqueToken,
  Page,
  PageParams,
  Password,
  RecoveryCode,
  RememberDeviceFields,
  ref,
  SixDigits,
  TenantSlugParams,
  TokenEnvelope,
  Uuid,
} from '../../schemas.ts'
import { CaptchaToken } from '../captcha/schemas.ts'

export const SignupBody = Type.Object(
  { email: Email, password: NewPassword, captchaToken: Type.Optional(CaptchaToken) },
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
    recoveryCode: Type.Optional(RecoveryCode),
    emailOtpCode: Type.Optional(SixDigits),
    captchaToken: Type.Optional(CaptchaToken),
    ...RememberDeviceFields,
  },
  {
    additionalProperties: false,
    ...NotBothTotpAndRecoveryCode,
    examples: [
      { email: 'ada@example.com', password: 'plum-voyage-fender-71' },
      { email: 'ada@example.com', password: 'plum-voyage-fender-71', totpCode: '492039' },
      { email: 'ada@example.com', password: 'plum-voyage-fender-71', recoveryCode: 'k7qdm-2xw4p' },
    ],
  },
)
export type LoginBody = Static<typeof LoginBody>

export const RefreshBody = Type.Object(
  {
    refreshToken: OpaqueToken,
    organizationId: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'An organization of the tenant (CONTRACT §18): the access token is then an organization token carrying `org_id` and `org_roles`. A user who is not a member: 403 `not_a_member`.',
      }),
    ),
  },
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

/** A live session (CONTRACT §9, GET me/sessions). */
const SessionComponent = Type.Object(
  {
    id: Type.String({ description: 'The session id: `sid` of its access tokens.' }),
    createdAt: DateTime,
    lastUsedAt: DateTime,
    ip: Type.Union([Type.String(), Type.Null()], {
      description: 'Where the last sign-in or refresh came from.',
    }),
    userAgent: Type.Union([Type.String(), Type.Null()], {
      description: 'The User-Agent of the last sign-in or refresh (at most 512 characters).',
    }),
    current: Type.Boolean({ description: 'The session of the token that asks.' }),
  },
  { $id: 'Session', description: 'A live session: a signed-in device.' },
)

const SessionPageComponent = Page(
  'SessionPage',
  ref(SessionComponent),
  'A page of live sessions, newest first.',
)
export const SessionPage = ref(SessionPageComponent)
export type SessionPage = Static<typeof SessionPage>

export const ListSessionsQuery = Type.Object(PageParams, { additionalProperties: false })
export type ListSessionsQuery = Static<typeof ListSessionsQuery>

export const OwnSessionParams = Type.Object({ ...TenantSlugParams.properties, id: Uuid })
export const UserSessionsParams = Type.Object({ ...TenantSlugParams.properties, userId: Uuid })
export const UserSessionParams = Type.Object({
  ...TenantSlugParams.properties,
  userId: Uuid,
  id: Uuid,
})

/** The components of this module, registered by src/plugins/openapi.ts. */
export const sessionComponents = [
  LogoutAllComponent,
  VerificationRequiredComponent,
  SessionComponent,
  SessionPageComponent,
]
