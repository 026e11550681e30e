// Shapes of the current-user and user-administration routes (SPEC, Current user and
// Administration; CONTRACT §2, User and PATCH users).
import { type Static, Type } from 'typebox'
import {
  AuthPolicy,
  MfaPolicy,
  NewPassword,
  PageParams,
  Password,
  Plan,
  PublicUser,
  Role,
  TenantSlugParams,
  Uuid,
} from '../../schemas.ts'

/** GET /me: the user with the tenant fields the signed-in user may see. */
export const Me = Type.Object({
  ...PublicUser.properties,
  tenant: Type.Object({
    id: Type.String(),
    slug: Type.String(),
    name: Type.String(),
    plan: Plan,
    mfaPolicy: MfaPolicy,
    authPolicy: AuthPolicy,
    logoUrl: Type.String({ description: 'Empty when the tenant has no logo.' }),
  }),
})

export const ChangePasswordBody = Type.Object(
  { currentPassword: Password, newPassword: NewPassword },
  { additionalProperties: false },
)
export type ChangePasswordBody = Static<typeof ChangePasswordBody>

export const ListUsersQuery = Type.Object(PageParams, { additionalProperties: false })
export type ListUsersQuery = Static<typeof ListUsersQuery>

// The spec types userId as a uuid here, so a malformed one is a 400 validation error.
export const UserParams = Type.Object({ ...TenantSlugParams.properties, userId: Uuid })
// ...and as a plain string on totp/disable, where a malformed one is an unknown user (404).
export const TotpParams = Type.Object({
  ...TenantSlugParams.properties,
  userId: Type.String({ minLength: 1, maxLength: 200 }),
})

export const UserPatchBody = Type.Object(
  {
    role: Type.Optional(Role),
    status: Type.Optional(Type.Union([Type.Literal('Active'), Type.Literal('Suspended')])),
  },
  { additionalProperties: false },
)
export type UserPatchBody = Static<typeof UserPatchBody>
