// Shapes of a tenant's CAPTCHA (CONTRACT §21): the setting an admin sends in PATCH tenant,
// the record GET tenant shows (never the secret), the ALTCHA challenge, and the
// `captchaToken` field of the bodies of the actions it guards.
import { type Static, Type } from 'typebox'

export const CAPTCHA_PROVIDERS = ['altcha', 'turnstile', 'hcaptcha', 'recaptcha'] as const
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number]

export const CAPTCHA_ACTIONS = ['sign_up', 'sign_in', 'password_reset', 'login_code'] as const
export type CaptchaAction = (typeof CAPTCHA_ACTIONS)[number]

const Provider = Type.Union(
  [
    Type.Literal('altcha'),
    Type.Literal('turnstile'),
    Type.Literal('hcaptcha'),
    Type.Literal('recaptcha'),
  ],
  {
    description:
      '`altcha`: proof of work served by this service (`GET captcha/challenge`), no third party; the others are verified at their siteverify endpoint.',
  },
)

const Actions = Type.Array(
  Type.Union([
    Type.Literal('sign_up'),
    Type.Literal('sign_in'),
    Type.Literal('password_reset'),
    Type.Literal('login_code'),
  ]),
  {
    uniqueItems: true,
    maxItems: CAPTCHA_ACTIONS.length,
    description:
      'The actions whose API call must carry `captchaToken`: sign-up, password login, password-reset request, login-code request.',
  },
)

const MinScore = Type.Number({
  minimum: 0,
  maximum: 1,
  description:
    'reCAPTCHA only (default 0.5): an answer carrying a score (reCAPTCHA v3) passes only with at least this score and with the action of the call (`sign_up`, `sign_in`, `password_reset`, `login_code`, as the client passes to `grecaptcha.execute`); a v2 answer carries no score and passes on `success` alone.',
})

export const CaptchaSetting = Type.Union(
  [
    Type.Object(
      {
        provider: Provider,
        siteKey: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 200,
            description:
              "The provider's public site key: required for turnstile, hcaptcha and recaptcha; altcha takes none.",
          }),
        ),
        secret: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 500,
            description:
              "The provider's secret key (write-only, stored sealed): required for a third-party provider unless the same provider's secret is already stored; altcha takes none.",
          }),
        ),
        on: Actions,
        minScore: Type.Optional(MinScore),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The CAPTCHA of sign-up and sign-in, or null: none.' },
)
export type CaptchaSetting = Static<typeof CaptchaSetting>

export const CaptchaRecord = Type.Union(
  [
    Type.Object({
      provider: Provider,
      siteKey: Type.Union([Type.String(), Type.Null()], {
        description: 'null for altcha.',
      }),
      hasSecret: Type.Boolean({ description: 'A secret is stored (it is never shown).' }),
      on: Actions,
      minScore: Type.Optional(MinScore),
    }),
    Type.Null(),
  ],
  { description: 'The CAPTCHA of sign-up and sign-in (CONTRACT §21); null: none.' },
)
export type CaptchaRecord = Static<typeof CaptchaRecord>

export const PublicCaptcha = Type.Union(
  [
    Type.Object({
      provider: Provider,
      siteKey: Type.Union([Type.String(), Type.Null()], { description: 'null for altcha.' }),
      on: Actions,
    }),
    Type.Null(),
  ],
  {
    description:
      'The CAPTCHA a client shows for the actions in `on` (CONTRACT §21): the provider and its public site key; null: none.',
  },
)

export const CaptchaToken = Type.String({
  minLength: 1,
  maxLength: 8192,
  description:
    "The CAPTCHA's answer, where the workspace's `captcha.on` holds this action: the ALTCHA payload (base64) or the provider's response token. Missing: 400 `captcha_required`; invalid, expired or used before: 400 `captcha_invalid`.",
})

export const AltchaChallenge = Type.Object(
  {
    parameters: Type.Object(
      {
        algorithm: Type.String(),
        nonce: Type.String(),
        salt: Type.String(),
        cost: Type.Integer(),
        keyLength: Type.Integer(),
        keyPrefix: Type.String(),
        keySignature: Type.Optional(Type.String()),
        expiresAt: Type.Optional(Type.Integer()),
      },
      { additionalProperties: false },
    ),
    signature: Type.String(),
  },
  {
    description:
      'An ALTCHA proof-of-work challenge (altcha-lib v2), signed by the service, valid 5 minutes, good for one answer.',
  },
)
