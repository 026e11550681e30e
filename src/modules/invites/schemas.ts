// Shapes of the invite routes (SPEC, Invites; CONTRACT §2, Invite record).
import { type Static, Type } from 'typebox'
import {
  DateTime,
  Email,
  NewPassword,
  NullableDateTime,
  OpaqueToken,
  Page,
  PageParams,
  Role,
  ref,
  TenantSlugParams,
} from '../../schemas.ts'
import { MEMBER_ROLE } from '../roles/permissions.ts'

export const DEFAULT_TTL_SECONDS = 604800
export const MIN_TTL_SECONDS = 60
export const MAX_TTL_SECONDS = 2592000

export const InviteStatus = Type.Union([
  Type.Literal('Pending'),
  Type.Literal('Accepted'),
  Type.Literal('Revoked'),
  Type.Literal('Expired'),
])
export type InviteStatus = Static<typeof InviteStatus>

const InviteComponent = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    role: Role,
    roles: Type.Array(Type.String(), {
      description: 'The custom roles (CONTRACT §17) the invitee is given on accepting, sorted.',
    }),
    status: InviteStatus,
    createdAt: DateTime,
    expiresAt: DateTime,
    acceptedAt: NullableDateTime,
    revokedAt: NullableDateTime,
    invitedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'The id of the user or API key that sent the invitation.',
    }),
  },
  { $id: 'Invite', description: 'An invitation (never its token).' },
)
export const InviteRecord = ref(InviteComponent)
export type InviteRecord = Static<typeof InviteRecord>

export const CreateInviteBody = Type.Object(
  {
    email: Email,
    role: Type.Optional(Role),
    roles: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 50,
        description:
          'Custom tenant roles (CONTRACT §17) given when the invitation is accepted (an unknown one: 400 validation). A role deleted or renamed before then is skipped.',
      }),
    ),
    ttlSeconds: Type.Optional(
      Type.Integer({
        minimum: MIN_TTL_SECONDS,
        maximum: MAX_TTL_SECONDS,
        description: `Lifetime in seconds; default ${DEFAULT_TTL_SECONDS} (7 days).`,
      }),
    ),
    sendEmail: Type.Optional(Type.Boolean({ description: 'Mail the token (default true).' })),
  },
  {
    additionalProperties: false,
    examples: [{ email: 'new.colleague@example.com', role: MEMBER_ROLE, ttlSeconds: 604800 }],
  },
)
export type CreateInviteBody = Static<typeof CreateInviteBody>

const CreatedInviteComponent = Type.Object(
  {
    token: Type.String({
      description: 'The invitation token: returned this once, never again.',
    }),
    invite: InviteRecord,
  },
  { $id: 'CreatedInvite', description: 'A new invitation, with its token (this once).' },
)
export const CreatedInvite = ref(CreatedInviteComponent)

const InvitePageComponent = Page('InvitePage', InviteRecord, 'A page of invitations, newest first.')
export const InvitePage = ref(InvitePageComponent)

export const ListInvitesQuery = Type.Object(
  {
    includeAccepted: Type.Boolean({ default: false }),
    includeRevoked: Type.Boolean({ default: false }),
    ...PageParams,
  },
  { additionalProperties: false },
)
export type ListInvitesQuery = Static<typeof ListInvitesQuery>

// The spec types the id as a string: a malformed one is an unknown invitation (404).
export const InviteParams = Type.Object({
  ...TenantSlugParams.properties,
  id: Type.String({ minLength: 1 }),
})

export const AcceptInviteBody = Type.Object(
  { token: OpaqueToken, password: NewPassword },
  {
    additionalProperties: false,
    examples: [
      { token: 'sV3d9Kq1xZ7mB2nR8cT4yW6pL0aF5gH1jE3uO9iQ2kM', password: 'plum-voyage-fender-71' },
    ],
  },
)
export type AcceptInviteBody = Static<typeof AcceptInviteBody>

/** The components of this module, registered by src/plugins/openapi.ts. */
export const inviteComponents = [InviteComponent, CreatedInviteComponent, InvitePageComponent]
