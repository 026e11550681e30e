// Shapes of the tenant routes (SPEC capability 1 and Administration; CONTRACT §2, Tenant
// record).
import { type Static, Type } from 'typebox'
import { Locale } from '../../i18n/schema.ts'
import {
  AuthPolicy,
  DateTime,
  Email,
  MfaPolicy,
  NewPassword,
  Password,
  Plan,
  ref,
  SixDigits,
} from '../../schemas.ts'
import { CaptchaRecord, CaptchaSetting } from '../captcha/schemas.ts'
import { BrandingRecord, BrandingSetting } from './branding.ts'
import { LOGO_MIME_TYPES } from './logo-image.ts'

// The tenant plugin checks a path's slug with the same rule before any lookup.
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'

export const CreateTenantBody = Type.Object(
  {
    tenant: Type.Object(
      {
        slug: Type.String({ pattern: SLUG_PATTERN, minLength: 1, maxLength: 63 }),
        name: Type.String({ minLength: 1, maxLength: 120 }),
        plan: Type.Optional(Plan),
      },
      { additionalProperties: false },
    ),
    admin: Type.Object({ email: Email, password: NewPassword }, { additionalProperties: false }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        tenant: { slug: 'acme', name: 'Acme Inc.', plan: 'Starter' },
        admin: { email: 'ada@acme.example', password: 'plum-voyage-fender-71' },
      },
    ],
  },
)
export type CreateTenantBody = Static<typeof CreateTenantBody>

const BreachedPasswordPolicy = Type.Union([Type.Literal('off'), Type.Literal('block')], {
  description:
    '`block` (the default): sign-up, invitation acceptance, reset and change refuse a password found in a breach corpus (400 `validation`, `details.reason` `password_breached`), and a password sign-in with one succeeds and marks the user (`passwordBreached` in `/me`).',
})

/** CONTRACT §20, magic links. */
const PasswordlessMethod = Type.Union(
  [Type.Literal('code'), Type.Literal('link'), Type.Literal('both')],
  {
    description:
      "What the hosted pages' emailed sign-in sends: `code` (the default, the 6-digit code), `link` (a sign-in link that works once, within 15 minutes, only in the browser that asked; opened elsewhere it shows the code to type there), or `both` (the person chooses). The API's request-login-code always sends a code.",
  },
)

/** CONTRACT §21, remembered devices. */
const MfaRememberDays = Type.Integer({
  minimum: 0,
  maximum: 90,
  description:
    'Days a device that gave a second factor and asked to be remembered skips it (0, the default: devices are not remembered; setting 0 forgets every remembered device).',
})

const TenantComponent = Type.Object(
  {
    id: Type.String(),
    slug: Type.String(),
    name: Type.String(),
    plan: Plan,
    mfaPolicy: MfaPolicy,
    authPolicy: AuthPolicy,
    passwordlessJitSignup: Type.Boolean(),
    passwordlessMethod: PasswordlessMethod,
    idpOauthEnabled: Type.Boolean(),
    idpClientId: Type.String({ description: 'Empty when no credentials are stored.' }),
    hasIdpClientSecret: Type.Boolean(),
    requireVerifiedEmail: Type.Boolean({
      description: 'Password sign-in of an unverified address answers 403 `email_not_verified`.',
    }),
    securityNotifications: Type.Boolean({
      description: 'Users get a "Security alert:" mail on changes to how they sign in.',
    }),
    passkeysEnabled: Type.Boolean({ description: 'Passkey registration and sign-in.' }),
    dynamicClientRegistration: Type.Boolean({
      description:
        "OpenID Connect dynamic client registration (RFC 7591) open at the tenant's issuer; such clients are third-party.",
    }),
    breachedPasswordPolicy: BreachedPasswordPolicy,
    captcha: CaptchaRecord,
    mfaRememberDays: MfaRememberDays,
    branding: BrandingRecord,
    logoUrl: Type.String({ description: 'Empty when the tenant has no logo.' }),
    defaultLocale: Type.String({
      description:
        'The locale the pages and mails fall back to (CONTRACT §20; `en` by default), always among `locales`.',
    }),
    locales: Type.Array(Type.String(), {
      description:
        'The locales the pages and mails may speak, in the service’s order; every supported one until set.',
    }),
    createdAt: DateTime,
  },
  { $id: 'Tenant', description: "The tenant's record and settings." },
)
export const TenantRecord = ref(TenantComponent)

export const TenantPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
    mfaPolicy: Type.Optional(MfaPolicy),
    authPolicy: Type.Optional(AuthPolicy),
    passwordlessJitSignup: Type.Optional(Type.Boolean()),
    passwordlessMethod: Type.Optional(PasswordlessMethod),
    idpOauthEnabled: Type.Optional(
      Type.Boolean({ description: 'true only once idp credentials are stored.' }),
    ),
    requireVerifiedEmail: Type.Optional(Type.Boolean()),
    securityNotifications: Type.Optional(Type.Boolean()),
    passkeysEnabled: Type.Optional(Type.Boolean()),
    dynamicClientRegistration: Type.Optional(Type.Boolean()),
    breachedPasswordPolicy: Type.Optional(BreachedPasswordPolicy),
    captcha: Type.Optional(CaptchaSetting),
    mfaRememberDays: Type.Optional(MfaRememberDays),
    branding: Type.Optional(BrandingSetting),
    defaultLocale: Type.Optional(Locale),
    locales: Type.Optional(
      Type.Array(Locale, {
        minItems: 1,
        uniqueItems: true,
        description: 'At least one; must hold `defaultLocale` (the one sent, else the stored one).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Acme Corporation', mfaPolicy: 'Required' },
      { defaultLocale: 'de', locales: ['en', 'de', 'fr'] },
      { captcha: { provider: 'altcha', on: ['sign_up', 'password_reset'] } },
    ],
  },
)
export type TenantPatchBody = Static<typeof TenantPatchBody>

export const LogoMimeType = Type.Union(LOGO_MIME_TYPES.map((m) => Type.Literal(m)))

export const LogoBody = Type.Object(
  {
    mimeType: LogoMimeType,
    data: Type.String({
      minLength: 1,
      description:
        'The image as base64, optionally as a `data:<mimeType>;base64,` URL; at most 512 KiB decoded.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        mimeType: 'image/png',
        data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      },
    ],
  },
)
export type LogoBody = Static<typeof LogoBody>

const LogoComponent = Type.Object(
  { logoUrl: Type.String(), mimeType: LogoMimeType, updatedAt: DateTime },
  { $id: 'Logo', description: "The tenant's logo, as stored." },
)
export const LogoSaved = ref(LogoComponent)

// CONTRACT §9: the slug typed again, and the admin's password, or, for an admin without
// one, a login code requested just before: exactly one of the two.
export const TenantDeleteBody = Type.Object(
  {
    confirmSlug: Type.String({ minLength: 1, maxLength: 63, description: "The tenant's slug." }),
    password: Type.Optional(Password),
    code: Type.Optional(SixDigits),
  },
  {
    additionalProperties: false,
    oneOf: [{ required: ['password'] }, { required: ['code'] }],
    examples: [
      { confirmSlug: 'acme', password: 'plum-voyage-fender-71' },
      { confirmSlug: 'acme', code: '318274' },
    ],
  },
)
export type TenantDeleteBody = Static<typeof TenantDeleteBody>

/** The components of this module, registered by src/plugins/openapi.ts. */
export const tenantComponents = [TenantComponent, LogoComponent]
