// Shapes of the organizations routes (CONTRACT §18): the organization record, its members,
// its invitations, and the caller's own memberships.
import { type Static, Type } from 'typebox'
import {
  DateTime,
  Email,
  NewPassword,
  NullableDateTime,
  OpaqueToken,
  Page,
  PageParams,
  ref,
  TenantSlugParams,
  TokenEnvelope,
  Uuid,
} from '../../schemas.ts'

export const MAX_ORGANIZATIONS = 10_000
export const DEFAULT_INVITATION_TTL_SECONDS = 604800
const MIN_TTL_SECONDS = 60
const MAX_TTL_SECONDS = 2592000

const RoleNames = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50, description })

const JitBody = Type.Object(
  {
    emailDomains: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
      maxItems: 50,
      description:
        'Email domains (two labels or more; IDNs folded to punycode). A domain is claimed by at most one organization of the tenant (409 `domain_taken`).',
    }),
    roles: RoleNames('Organization roles (CONTRACT §17, kind `organization`) a JIT member gets.'),
  },
  { additionalProperties: false },
)

const JitComponent = Type.Object(
  {
    emailDomains: Type.Array(Type.String(), { description: 'Sorted, lowercase, punycode.' }),
    roles: Type.Array(Type.String(), { description: 'Organization role names, sorted.' }),
  },
  {
    $id: 'OrganizationJit',
    description:
      'JIT membership: a user whose verified address is of one of these domains becomes a member with these roles.',
  },
)

const OrganizationComponent = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    mfaRequired: Type.Boolean({
      description: 'An organization token needs a session with a second factor.',
    }),
    jit: ref(JitComponent),
    memberCount: Type.Integer({ minimum: 0 }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Organization', description: 'An organization inside the tenant (CONTRACT §18).' },
)
export const OrganizationRecord = ref(OrganizationComponent)
export type OrganizationRecord = Static<typeof OrganizationComponent>

const OrganizationEnvelopeComponent = Type.Object(
  { organization: OrganizationRecord },
  { $id: 'OrganizationEnvelope', description: 'One organization.' },
)
export const OrganizationEnvelope = ref(OrganizationEnvelopeComponent)

const OrganizationPageComponent = Page(
  'OrganizationPage',
  OrganizationRecord,
  'A page of organizations, oldest first.',
)
export const OrganizationPage = ref(OrganizationPageComponent)

const Name = Type.String({ minLength: 1, maxLength: 120 })
const Description = Type.String({ maxLength: 500 })

export const CreateOrganizationBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    mfaRequired: Type.Optional(Type.Boolean({ default: false })),
    jit: Type.Optional(JitBody),
  },
  { additionalProperties: false, examples: [{ name: 'Acme Corp', description: 'A customer' }] },
)
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>

export const PatchOrganizationBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    mfaRequired: Type.Optional(Type.Boolean()),
    jit: Type.Optional(JitBody),
  },
  { additionalProperties: false, examples: [{ mfaRequired: true }] },
)
export type PatchOrganizationBody = Static<typeof PatchOrganizationBody>

export const ListQuery = Type.Object({ ...PageParams }, { additionalProperties: false })
export type ListQuery = Static<typeof ListQuery>

export const OrganizationParams = Type.Object({ ...TenantSlugParams.properties, id: Uuid })
export const MemberParams = Type.Object({
  ...TenantSlugParams.properties,
  id: Uuid,
  userId: Uuid,
})
export const InvitationParams = Type.Object({
  ...TenantSlugParams.properties,
  id: Uuid,
  invitationId: Uuid,
})

const MemberComponent = Type.Object(
  {
    userId: Uuid,
    email: Type.String(),
    roles: Type.Array(Type.String(), { description: 'Organization role names, sorted.' }),
    joinedAt: DateTime,
  },
  { $id: 'OrganizationMember', description: 'A member of an organization.' },
)
export const MemberRecord = ref(MemberComponent)
export type MemberRecord = Static<typeof MemberComponent>

const MemberEnvelopeComponent = Type.Object(
  { member: MemberRecord },
  { $id: 'OrganizationMemberEnvelope', description: 'One membership.' },
)
export const MemberEnvelope = ref(MemberEnvelopeComponent)

const MemberPageComponent = Page(
  'OrganizationMemberPage',
  MemberRecord,
  'A page of members, oldest membership first.',
)
export const MemberPage = ref(MemberPageComponent)

export const MemberRolesBody = Type.Object(
  { roles: RoleNames('Organization role names (kind `organization`); at most 50.') },
  { additionalProperties: false, examples: [{ roles: ['Billing'] }] },
)
export type MemberRolesBody = Static<typeof MemberRolesBody>

const MembershipComponent = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    roles: Type.Array(Type.String(), { description: 'Organization role names, sorted.' }),
  },
  { $id: 'Membership', description: 'An organization the caller belongs to, and its roles there.' },
)
export const MembershipRecord = ref(MembershipComponent)

const MembershipListComponent = Type.Object(
  { items: Type.Array(MembershipRecord) },
  { $id: 'MembershipList', description: 'Every organization the caller belongs to, by name.' },
)
export const MembershipList = ref(MembershipListComponent)

export const InvitationStatus = Type.Union([
  Type.Literal('Pending'),
  Type.Literal('Accepted'),
  Type.Literal('Revoked'),
  Type.Literal('Expired'),
])
export type InvitationStatus = Static<typeof InvitationStatus>

const InvitationComponent = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    email: Type.String(),
    roles: Type.Array(Type.String(), { description: 'Organization roles given on accepting.' }),
    status: InvitationStatus,
    createdAt: DateTime,
    expiresAt: DateTime,
    acceptedAt: NullableDateTime,
    revokedAt: NullableDateTime,
    invitedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'The id of the user or API key that sent it.',
    }),
  },
  {
    $id: 'OrganizationInvitation',
    description: 'An invitation to an organization (never its token).',
  },
)
export const InvitationRecord = ref(InvitationComponent)
export type InvitationRecord = Static<typeof InvitationComponent>

const CreatedInvitationComponent = Type.Object(
  {
    invitation: InvitationRecord,
    token: Type.String({ description: 'The invitation token: returned this once, never again.' }),
  },
  {
    $id: 'CreatedOrganizationInvitation',
    description: 'A new invitation, with its token (this once).',
  },
)
export const CreatedInvitation = ref(CreatedInvitationComponent)

const InvitationPageComponent = Page(
  'OrganizationInvitationPage',
  InvitationRecord,
  'A page of the organization’s invitations, oldest first.',
)
export const InvitationPage = ref(InvitationPageComponent)

export const CreateInvitationBody = Type.Object(
  {
    email: Email,
    roles: Type.Optional(RoleNames('Organization roles given when accepted.')),
    ttlSeconds: Type.Optional(
      Type.Integer({
        minimum: MIN_TTL_SECONDS,
        maximum: MAX_TTL_SECONDS,
        description: `Lifetime in seconds; default ${DEFAULT_INVITATION_TTL_SECONDS} (7 days).`,
      }),
    ),
    sendEmail: Type.Optional(Type.Boolean({ description: 'Mail the token (default true).' })),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', roles: ['Billing'] }] },
)
export type CreateInvitationBody = Static<typeof CreateInvitationBody>

export const AcceptInvitationBody = Type.Object(
  {
    token: OpaqueToken,
    password: Type.Optional(NewPassword),
  },
  {
    additionalProperties: false,
    examples: [{ token: 'sV3d9Kq1xZ7mB2nR8cT4yW6pL0aF5gH1jE3uO9iQ2kM' }],
  },
)
export type AcceptInvitationBody = Static<typeof AcceptInvitationBody>

const AcceptedInvitationComponent = Type.Object(
  {
    membership: MembershipRecord,
    session: Type.Union([TokenEnvelope, Type.Null()], {
      description:
        'The new account’s session, when accepting signed the address up and the workspace asks no verification first; else null.',
    }),
    verificationRequired: Type.Boolean({
      description: 'The new account must verify its address (auth/verify-email) to sign in.',
    }),
  },
  { $id: 'AcceptedOrganizationInvitation', description: 'The membership the invitation made.' },
)
export const AcceptedInvitation = ref(AcceptedInvitationComponent)

export const organizationComponents = [
  AcceptedInvitationComponent,
  JitComponent,
  OrganizationComponent,
  OrganizationEnvelopeComponent,
  OrganizationPageComponent,
  MemberComponent,
  MemberEnvelopeComponent,
  MemberPageComponent,
  MembershipComponent,
  MembershipListComponent,
  InvitationComponent,
  CreatedInvitationComponent,
  InvitationPageComponent,
]
