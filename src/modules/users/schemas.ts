// Shapes of the current-user and user-administration routes (SPEC, Current user and
// Administration; CONTRACT §2, User and PATCH users).
import { type Static, Type } from 'typebox'
import { Locale } from '../../i18n/schema.ts'
import {
  AuthPolicy,
  MfaPolicy,
  NewPassword,
  Page,
  PageParams,
  Password,
  Plan,
  PublicUser,
  Role,
  ref,
  TenantSlugParams,
  UserComponent,
  Uuid,
} from '../../schemas.ts'
import { ADMIN_ROLE } from '../roles/permissions.ts'
import { PermissionName } from '../roles/schemas.ts'

/** GET /me: the user with the tenant fields the signed-in user may see. */
const CurrentUserComponent = Type.Object(
  {
    ...UserComponent.properties,
    permissions: Type.Array(PermissionName, {
      description:
        'The effective tenant permissions (CONTRACT §17): the base role’s (an Admin every one, a Member none) and the custom roles’, sorted.',
    }),
    passwordBreached: Type.Boolean({
      description:
        'The password was found in a breach corpus at a sign-in (CONTRACT §21, the tenant’s breachedPasswordPolicy is block): choose a new one; a change or reset clears it.',
    }),
    hasPassword: Type.Boolean({
      description:
        'Whether the account has a password. One that signed up through a social connection, SSO, the identity provider or an emailed code has none: it sets a first one with POST me/password (PATCH me/password changes one, with the current one).',
    }),
    tenant: Type.Object({
      id: Type.String(),
      slug: Type.String(),
      name: Type.String(),
      plan: Plan,
      mfaPolicy: MfaPolicy,
      authPolicy: AuthPolicy,
      logoUrl: Type.String({ description: 'Empty when the tenant has no logo.' }),
    }),
    impersonatedBy: Type.Optional(
      Type.Object(
        { id: Type.String(), email: Type.String() },
        {
          description:
            'CONTRACT §22: present only while the access token is an impersonation, naming the administrator acting as this user (an application shows it as a banner, with the way to end it).',
        },
      ),
    ),
  },
  { $id: 'CurrentUser', description: 'The signed-in user, with the tenant it belongs to.' },
)
export const Me = ref(CurrentUserComponent)

const UserPageComponent = Page('UserPage', PublicUser, 'A page of users, oldest first.')
export const UserPage = ref(UserPageComponent)

export const ChangePasswordBody = Type.Object(
  { currentPassword: Password, newPassword: NewPassword },
  {
    additionalProperties: false,
    examples: [
      { currentPassword: 'plum-voyage-fender-71', newPassword: 'quartz-harbor-lantern-58' },
    ],
  },
)
export type ChangePasswordBody = Static<typeof ChangePasswordBody>

/** POST me/password: a first password, for an account that has none. */
export const SetPasswordBody = Type.Object(
  { newPassword: NewPassword },
  { additionalProperties: false, examples: [{ newPassword: 'quartz-harbor-lantern-58' }] },
)
export type SetPasswordBody = Static<typeof SetPasswordBody>

/** PATCH /me: the signed-in user's own settings (CONTRACT §20); null clears one. */
export const MePatchBody = Type.Object(
  { locale: Type.Optional(Type.Union([Locale, Type.Null()])) },
  { additionalProperties: false, examples: [{ locale: 'de' }, { locale: null }] },
)
export type MePatchBody = Static<typeof MePatchBody>

export const ListUsersQuery = Type.Object(
  {
    ...PageParams,
    locked: Type.Optional(
      Type.Boolean({
        description: 'true: only the users whose sign-in failure lock holds now (CONTRACT §21).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type ListUsersQuery = Static<typeof ListUsersQuery>

// The spec types userId as a uuid here, so a malformed one is a 400 validation error.
export const UserParams = Type.Object({ ...TenantSlugParams.properties, userId: Uuid })
// ...and as a plain string on totp/disable, where a malformed one is an unknown user (404).
export const TotpParams = Type.Object({
  ...TenantSlugParams.properties,
  userId: Type.String({ minLength: 1, maxLength: 200 }),
})

/** A profile field as PATCH users sets it (CONTRACT §14): null clears it. */
const ProfileText = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength }), Type.Null()]))

export const UserPatchBody = Type.Object(
  {
    role: Type.Optional(Role),
    status: Type.Optional(Type.Union([Type.Literal('Active'), Type.Literal('Suspended')])),
    displayName: ProfileText(200),
    givenName: ProfileText(200),
    familyName: ProfileText(200),
    externalId: ProfileText(256),
    locale: Type.Optional(Type.Union([Locale, Type.Null()])),
  },
  {
    additionalProperties: false,
    examples: [
      { role: ADMIN_ROLE },
      { status: 'Suspended' },
      { displayName: 'Ada Lovelace', givenName: 'Ada', familyName: 'Lovelace' },
      { externalId: '00u1ab2cd3EF4gh5i6j7', displayName: null },
    ],
  },
)
export type UserPatchBody = Static<typeof UserPatchBody>

export const ImpersonateBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Why (kept in the audit log, UserImpersonated, and both people’s exports).',
    }),
  },
  { additionalProperties: false, examples: [{ reason: 'Ticket 4711: the invoice page fails' }] },
)
export type ImpersonateBody = Static<typeof ImpersonateBody>

const ImpersonationComponent = Type.Object(
  {
    user: PublicUser,
    accessToken: Type.String({
      description:
        'A JWT for the user with `act: {sub: <administrator id>}`; it cannot change the password or factors or delete the account (403 `impersonation_forbidden`).',
    }),
    accessTokenExpiresIn: Type.Integer({ description: 'Seconds (at most 900).' }),
  },
  {
    $id: 'Impersonation',
    description: 'A session as the user, for at most 15 minutes and without a refresh token.',
  },
)
export const Impersonation = ref(ImpersonationComponent)

const ForgottenDevicesComponent = Type.Object(
  {
    ok: Type.Literal(true),
    count: Type.Integer({ minimum: 0, description: 'How many devices were remembered.' }),
  },
  {
    $id: 'ForgottenDevices',
    description: 'The user’s remembered devices are forgotten (CONTRACT §21).',
  },
)
export const ForgottenDevices = ref(ForgottenDevicesComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const userComponents = [
  CurrentUserComponent,
  UserPageComponent,
  ImpersonationComponent,
  ForgottenDevicesComponent,
]
