// Shapes of the tenant routes (SPEC capability 1 and Administration; CONTRACT §2, Tenant
// record).
import { type Static, Type } from 'typebox'
import { AuthPolicy, DateTime, Email, MfaPolicy, NewPassword, Plan } from '../../schemas.ts'
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
  { additionalProperties: false },
)
export type CreateTenantBody = Static<typeof CreateTenantBody>

export const TenantRecord = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  plan: Plan,
  mfaPolicy: MfaPolicy,
  authPolicy: AuthPolicy,
  passwordlessJitSignup: Type.Boolean(),
  idpOauthEnabled: Type.Boolean(),
  idpClientId: Type.String({ description: 'Empty when no credentials are stored.' }),
  hasIdpClientSecret: Type.Boolean(),
  logoUrl: Type.String({ description: 'Empty when the tenant has no logo.' }),
  createdAt: DateTime,
})

export const TenantPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
    mfaPolicy: Type.Optional(MfaPolicy),
    authPolicy: Type.Optional(AuthPolicy),
    passwordlessJitSignup: Type.Optional(Type.Boolean()),
    idpOauthEnabled: Type.Optional(
      Type.Boolean({ description: 'true only once idp credentials are stored.' }),
    ),
  },
  { additionalProperties: false },
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
  { additionalProperties: false },
)
export type LogoBody = Static<typeof LogoBody>

export const LogoSaved = Type.Object({
  logoUrl: Type.String(),
  mimeType: LogoMimeType,
  updatedAt: DateTime,
})
