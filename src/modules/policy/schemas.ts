// Shapes of the policy dry-run (CONTRACT §21).
import { type Static, Type } from 'typebox'
import { AuthPolicy, MfaPolicy } from '../../schemas.ts'

export const DryRunBody = Type.Object(
  {
    mfaPolicy: Type.Optional(MfaPolicy),
    authPolicy: Type.Optional(AuthPolicy),
    requireVerifiedEmail: Type.Optional(Type.Boolean()),
    breachedPasswordPolicy: Type.Optional(Type.Union([Type.Literal('off'), Type.Literal('block')])),
    enforcedSsoDomains: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
        maxItems: 100,
        description:
          'The email domains whose users would sign in through SSO only (CONTRACT §12; Admins excepted). Omitted: the domains of the enabled connections with `enforce` today. A name that is not a DNS name of two labels or more is 400 `validation`.',
      }),
    ),
    sinceDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 90,
        default: 30,
        description: 'The period: the sign-ins of the last this many days.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'The proposed settings; an omitted one is the tenant’s current setting.',
    examples: [{ mfaPolicy: 'Required', sinceDays: 30 }],
  },
)
export type DryRunBody = Static<typeof DryRunBody>

export const DryRunOutcome = Type.Union([
  Type.Literal('blocked'),
  Type.Literal('second_factor_needed'),
  Type.Literal('sso_redirect'),
  Type.Literal('password_change_needed'),
])
export type DryRunOutcome = Static<typeof DryRunOutcome>

export const DryRunResult = Type.Object(
  {
    signIns: Type.Integer({ description: 'UserLogin events of the period.' }),
    users: Type.Integer({ description: 'Distinct users among them.' }),
    affected: Type.Array(
      Type.Object({
        userId: Type.String(),
        email: Type.String(),
        outcome: DryRunOutcome,
        reason: Type.String({
          description:
            '`sso_required`, `password_login_disabled`, `passwordless_disabled`, `email_not_verified`, `password_breached` or `mfa_not_enrolled` (docs/security-model.md, Policy dry-run).',
        }),
      }),
      {
        description:
          'One entry per user the proposed settings would stop or send a step further, by email.',
      },
    ),
  },
  {
    description:
      'What the proposed settings would do to the period’s sign-ins; nothing was changed.',
  },
)
export type DryRunResult = Static<typeof DryRunResult>
