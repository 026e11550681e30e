// Typed events (issue 36, Structure; Logto's DataHookContextMap): one map from each audit
// action to the schema of the metadata its event carries, declared once here as TypeBox
// schemas. From it follow:
//   - the static types: the append (recorder.ts) takes entries typed by them, so a call site
//     cannot write a field its action does not declare, nor misspell one;
//   - the webhook payloads (webhooks/events.ts): each event's body type and JSON schema;
//   - the documentation: the OpenAPI document's `webhooks` (plugins/openapi.ts) and the event
//     list of docs/webhooks-and-hooks.md (`npm run openapi:generate` writes both, and
//     `npm run lint` and test/webhook-events.test.ts fail when they differ from this map).
// A schema is closed (`additionalProperties: false`) unless its events pass through fields
// of their own (a sign-in's proof): those are `open` and say so. Every field is optional
// where one call site writes it and another does not.
import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox'
import type { AuditAction } from './actions.ts'

const Str = () => Type.Optional(Type.String())
/** An ISO 8601 time, as the metadata stores it. */
const Iso = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) })
const Count = (description: string) => Type.Integer({ minimum: 0, description })
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const Strings = (description?: string) =>
  Type.Array(Type.String(), description ? { description } : {})

/** What the map holds: an object schema (TObject's own constraint cannot hold them all). */
export type MetadataSchema = TSchema & { type: 'object'; properties: TProperties }

/** A schema whose events carry only the fields it names. */
function closed<P extends TProperties>(description: string, properties: P): TObject<P> {
  return Type.Object(properties, { additionalProperties: false, description })
}

/** A schema whose events may carry fields beyond those it names (its type says so too). */
type Open<P extends TProperties> = TObject<P> & { readonly additionalProperties: true }
function open<P extends TProperties>(description: string, properties: P): Open<P> {
  return Type.Object(properties, { additionalProperties: true, description }) as Open<P>
}

/**
 * A sign-in's metadata: how it was proved (`via`, `method`) and the proof's own fields (the
 * identity provider's issuer and subject, a passkey, the SSO connection...), which the sign-in
 * pipeline passes through from each first factor; hence open.
 */
const SIGN_IN = {
  via: Type.Optional(Type.String({ description: 'The route or flow the sign-in went through.' })),
  method: Type.Optional(Type.String({ description: 'The first factor that proved it.' })),
  email: Type.Optional(Nullable(Type.String())),
  reason: Type.Optional(Type.String({ description: 'Why it failed (UserLoginFailed).' })),
  route: Str(),
  clientId: Type.Optional(
    Type.String({ description: 'The OpenID application the sign-in was for.' }),
  ),
  connectionId: Type.Optional(Type.String({ description: 'The SSO connection that proved it.' })),
  samlApp: Type.Optional(
    Type.String({ description: 'The SAML application (its id) the sign-in was for (§22).' }),
  ),
}
const SIGN_IN_NOTE = ' Carries the first factor’s own fields beside these.'

/** What an admin change changed: per field, its value before and after. */
const FromTo = Type.Record(
  Type.String(),
  Type.Object({ from: Type.Unknown(), to: Type.Unknown() }, { additionalProperties: false }),
  { description: 'Per changed field, `{from, to}`.' },
)
const FIELDS = { fields: Type.Optional(Strings('The fields that changed.')) }

const SESSION = {
  sessionId: Str(),
  reason: Type.Optional(Type.String({ description: 'Why the session was revoked.' })),
}

const ID = Type.String()

/** The map: every audit action (actions.ts) and the schema of its metadata. */
export const AUDIT_EVENTS = {
  UserSignup: open(
    `A user account was created by a sign-up, an invitation or a first sign-in.${SIGN_IN_NOTE}`,
    {
      ...SIGN_IN,
      role: Str(),
      status: Str(),
      inviteId: Str(),
    },
  ),
  UserLogin: open(`A user signed in.${SIGN_IN_NOTE}`, {
    ...SIGN_IN,
    linked: Type.Optional(
      Type.Boolean({ description: 'An identity-provider account was linked by it.' }),
    ),
  }),
  UserLoginFailed: open(`A sign-in was refused.${SIGN_IN_NOTE}`, SIGN_IN),
  UserLogout: closed('A user signed out: one session, or all of them.', {
    sessionId: Str(),
    via: Str(),
    all: Type.Optional(Type.Boolean()),
    count: Type.Optional(Count('The sessions ended.')),
  }),
  UserPasswordChanged: closed('A user’s password was changed, reset or set for the first time.', {
    via: Type.Optional(
      Type.String({
        description:
          'How: `reset` (an emailed code), `set` (a first password, POST me/password); none for a change (PATCH me/password).',
      }),
    ),
    sessionsEnded: Count('The user’s other sessions ended by it.'),
  }),
  UserEmailVerified: open(`A user’s address was verified.${SIGN_IN_NOTE}`, {
    ...SIGN_IN,
    inviteId: Str(),
  }),
  UserSoftDeleted: closed('A user was deleted (kept for the retention period).', {
    by: Str(),
    via: Str(),
    sessionsEnded: Type.Optional(Count('The user’s sessions ended by it.')),
  }),
  UserHardDeleted: open('A deleted user was purged after the retention period.', {
    deletedAt: Type.Optional(Iso()),
    retentionDays: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  UserUpdated: open('An admin or SCIM changed a user.', {
    ...FIELDS,
    changes: Type.Optional(FromTo),
    via: Str(),
  }),
  UserUnlocked: closed('An admin ended the user’s sign-in failure lock (CONTRACT §21).', {
    wasLocked: Type.Boolean({ description: 'Whether the lock held when it was ended.' }),
  }),
  RememberedDevicesForgotten: closed(
    'A user’s remembered devices (CONTRACT §21) were forgotten: they are asked the second factor again.',
    {
      count: Count('How many devices were remembered.'),
      reason: Type.String({
        description:
          '`forgotten` (the user asked), or what ended the user’s sessions (`password-changed`, `password-reset`, `totp-reset`, `logout-all`, …).',
      }),
    },
  ),
  MfaTotpEnrolled: closed('A user enrolled a TOTP authenticator.', { via: Str() }),
  MfaTotpDisabled: closed('An admin removed a user’s TOTP authenticator.', {
    by: Str(),
    wasEnabled: Type.Optional(Type.Boolean()),
    sessionsEnded: Type.Optional(Count('The user’s sessions ended by it.')),
  }),
  MfaTotpVerified: closed('A TOTP code was accepted.', { via: Str(), flow: Str() }),
  MfaEmailOtpSent: closed('An emailed second-factor code was sent.', { email: Str() }),
  MfaEmailOtpVerified: closed('An emailed second-factor code was accepted.', {}),
  MfaEmailOtpFailed: closed('An emailed second-factor code was refused.', { reason: Str() }),
  InviteCreated: closed('An invitation was created.', {
    inviteId: ID,
    role: Str(),
    roles: Type.Optional(Strings('The custom roles the invitee gains on accepting.')),
    expiresAt: Type.Optional(Iso()),
    sendEmail: Type.Optional(Type.Boolean()),
  }),
  InviteAccepted: closed('An invitation was accepted.', {
    inviteId: ID,
    role: Str(),
    invitedBy: Type.Optional(Nullable(Type.String())),
    pendingUserActivated: Type.Optional(Type.Boolean()),
  }),
  InviteRevoked: closed('An invitation was revoked, or superseded by a new one.', {
    inviteId: ID,
    reason: Type.String(),
    supersededBy: Str(),
  }),
  InviteExpired: closed('An invitation was found expired when it was used.', {
    inviteId: ID,
    expiredAt: Type.Optional(Iso()),
  }),
  ApiKeyCreated: closed('An API key was created.', {
    apiKeyId: ID,
    name: Str(),
    environment: Str(),
    prefix: Str(),
    expiresAt: Type.Optional(Nullable(Iso())),
    permissions: Type.Optional(Strings('The tenant permissions the key holds.')),
  }),
  ApiKeyRevoked: closed('An API key was revoked.', { apiKeyId: ID, name: Str(), prefix: Str() }),
  SessionCreated: closed('A session began.', SESSION),
  SessionRevoked: closed('A session was revoked.', SESSION),
  SessionFamilyCompromised: closed('A refresh token was reused: its session was revoked.', SESSION),
  TenantCreated: closed('The tenant was created.', { slug: Str(), name: Str(), plan: Str() }),
  TenantUpdated: closed('The tenant’s settings or logo changed.', {
    ...FIELDS,
    changes: Type.Optional(FromTo),
    mimeType: Str(),
    bytes: Type.Optional(Count('The new logo’s size.')),
    removed: Type.Optional(Type.Boolean({ description: 'The logo was removed.' })),
  }),
  TenantSoftDeleted: closed('The tenant was deleted.', {
    slug: Str(),
    sessionsEnded: Type.Optional(Count('The sessions ended by it.')),
    confirmedWith: Str(),
  }),
  GdprExportRequested: closed('A user’s data export was requested.', {}),
  GdprExportCompleted: closed('A user’s data export was produced.', {
    sessions: Type.Optional(Count('Sessions in the export.')),
    auditEvents: Type.Optional(Count('Audit events in the export.')),
    truncated: Type.Optional(
      Type.Object(
        { sessions: Type.Boolean(), auditEvents: Type.Boolean() },
        { additionalProperties: false },
      ),
    ),
  }),
  GdprErasureRequested: closed('A user’s erasure was requested.', { by: Str() }),
  GdprErasureCompleted: closed('A user’s data was erased.', {
    auditEventsScrubbed: Type.Optional(Count('Audit events scrubbed of the user’s data.')),
    invitesRevoked: Type.Optional(Count('Invitations revoked.')),
  }),
  IdpOauthLinked: closed('A user linked the tenant’s identity provider.', { clientId: Str() }),
  IdpOauthUnlinked: closed('A user unlinked the tenant’s identity provider.', {}),
  PasswordlessCodeSent: closed('An emailed sign-in code was sent.', { email: Str() }),
  PasswordlessCodeVerified: closed('An emailed sign-in code was accepted.', {}),
  PasswordlessCodeFailed: closed('An emailed sign-in code was refused.', {
    email: Str(),
    reason: Str(),
  }),
  PasswordResetRequested: closed('A password reset was requested.', { email: Str() }),
  MfaRecoveryCodeUsed: closed('A recovery code stood in for the second factor.', {
    remaining: Count('Unused recovery codes left.'),
  }),
  MfaRecoveryCodesRegenerated: closed('A user’s recovery codes were replaced.', {
    count: Count('New codes.'),
  }),
  PasskeyRegistered: closed('A passkey was registered.', {
    passkeyId: ID,
    deviceType: Type.Optional(Nullable(Type.String())),
    backedUp: Type.Optional(Type.Boolean()),
  }),
  PasskeyRemoved: closed('A passkey was removed.', { passkeyId: ID }),
  ApplicationCreated: closed('An OpenID application was created (by an admin or registration).', {
    applicationId: ID,
    clientId: ID,
    name: Str(),
    type: Str(),
    dynamic: Type.Optional(
      Type.Boolean({ description: 'Created by dynamic client registration.' }),
    ),
  }),
  ApplicationUpdated: closed('An OpenID application was changed.', {
    applicationId: ID,
    clientId: ID,
    changes: Type.Optional(Strings('The fields that changed.')),
  }),
  ApplicationDeleted: closed('An OpenID application was deleted.', {
    applicationId: ID,
    clientId: ID,
    name: Str(),
  }),
  ApplicationSecretRotated: closed('An OpenID application’s secret was replaced.', {
    applicationId: ID,
    clientId: ID,
  }),
  ApplicationConsentGranted: closed('A user consented to an application’s scopes.', {
    clientId: ID,
    scopes: Strings(),
  }),
  ApplicationConsentRevoked: closed('A user revoked an application’s access.', {
    clientId: ID,
    name: Str(),
    scopes: Type.Optional(Strings()),
  }),
  ApiResourceCreated: closed('An API resource was created.', {
    apiResourceId: ID,
    identifier: Type.String(),
    name: Str(),
  }),
  ApiResourceUpdated: closed('An API resource was changed.', {
    apiResourceId: ID,
    identifier: Type.String(),
    changes: Type.Optional(Strings('The fields that changed.')),
  }),
  ApiResourceDeleted: closed('An API resource was deleted.', {
    apiResourceId: ID,
    identifier: Type.String(),
    name: Str(),
  }),
  UserProvisioned: closed('SCIM created a user.', {
    via: Type.String(),
    active: Type.Optional(Type.Boolean()),
  }),
  UserDeprovisioned: closed('SCIM or an admin deprovisioned a user.', {
    via: Str(),
    by: Str(),
    sessionsEnded: Type.Optional(Count('The user’s sessions ended by it.')),
  }),
  UserImported: closed('The user import created or updated a user.', {
    outcome: Type.String(),
    hashType: Str(),
  }),
  WebhookCreated: closed('A webhook endpoint was created.', {
    webhookId: ID,
    url: Type.Optional(
      Type.String({ description: 'Its query values and any userinfo masked (`***`).' }),
    ),
    events: Type.Optional(Strings()),
  }),
  WebhookUpdated: closed('A webhook endpoint was changed.', {
    webhookId: ID,
    changed: Type.Optional(Strings('The fields sent.')),
  }),
  WebhookDeleted: closed('A webhook endpoint was deleted.', {
    webhookId: ID,
    url: Type.Optional(
      Type.String({ description: 'Its query values and any userinfo masked (`***`).' }),
    ),
  }),
  WebhookSecretRotated: closed('A webhook endpoint’s secret was replaced.', { webhookId: ID }),
  WebhookDisabled: closed('A webhook endpoint that failed everything for 5 days was disabled.', {
    webhookId: ID,
    url: Type.Optional(
      Type.String({ description: 'Its query values and any userinfo masked (`***`).' }),
    ),
    failingSince: Type.Optional(Iso()),
  }),
  HookCreated: closed('A hook was registered.', {
    hookId: ID,
    event: Str(),
    url: Type.Optional(
      Type.String({ description: 'Its query values and any userinfo masked (`***`).' }),
    ),
  }),
  HookUpdated: closed('A hook was changed.', {
    hookId: ID,
    changed: Type.Optional(Strings('The fields sent.')),
  }),
  HookDeleted: closed('A hook was deleted.', { hookId: ID, event: Str() }),
  HookDenied: closed(
    'A hook refused a sign-up, a sign-in or an access token (or failed under onFailure deny).',
    {
      hookId: ID,
      event: Str(),
      method: Type.Optional(Str()),
      outcome: Type.Optional(Type.String({ description: 'deny, or the failure: timeout, error.' })),
    },
  ),
  EmailTemplateUpdated: closed('A mail template was saved, or reset to the default mail.', {
    kind: Type.String({ description: 'The mail kind (login_code, invitation, …).' }),
    locale: Type.String(),
    change: Type.Union([Type.Literal('saved'), Type.Literal('reset')]),
    sanitized: Type.Optional(
      Type.Boolean({ description: 'Whether sanitising removed something from its HTML.' }),
    ),
  }),
  SsoConnectionCreated: closed('An SSO connection was created.', {
    connectionId: ID,
    name: Str(),
    type: Str(),
    domains: Type.Optional(Strings()),
  }),
  SsoConnectionUpdated: closed('An SSO connection was changed.', {
    connectionId: ID,
    changed: Type.Optional(Strings('The fields sent.')),
  }),
  SsoConnectionDeleted: closed('An SSO connection was deleted.', {
    connectionId: ID,
    name: Str(),
    type: Str(),
  }),
  SsoIdentityLinked: closed('A user’s account was linked to an SSO identity.', {
    connectionId: ID,
    subject: Str(),
  }),
  SocialConnectionCreated: closed('A social sign-in connection was created.', {
    connectionId: ID,
    provider: Str(),
    name: Str(),
  }),
  SocialConnectionUpdated: closed('A social sign-in connection was changed.', {
    connectionId: ID,
    changed: Type.Optional(Strings('The fields sent.')),
  }),
  SocialConnectionDeleted: closed('A social sign-in connection was deleted.', {
    connectionId: ID,
    provider: Str(),
    name: Str(),
  }),
  IdentityLinked: closed('A social identity was linked to a user’s account.', {
    connectionId: ID,
    provider: Str(),
    subject: Str(),
  }),
  IdentityUnlinked: closed('An outside identity was removed from a user’s account.', {
    connectionId: Str(),
    provider: Str(),
    identityId: Str(),
  }),
  RoleCreated: closed('A custom role was created.', {
    roleId: ID,
    name: Type.String(),
    kind: Type.String({ description: 'tenant or organization.' }),
    permissions: Strings('The tenant permissions it grants.'),
    resourceScopes: Type.Array(
      Type.Object({ resource: Type.String(), scopes: Strings() }, { additionalProperties: false }),
      { description: 'The API resource scopes it grants.' },
    ),
  }),
  RoleUpdated: closed('A custom role was changed.', {
    roleId: ID,
    name: Type.String(),
    fields: Strings('The fields the change set.'),
  }),
  RoleDeleted: closed('A custom role was deleted (and taken from everyone who held it).', {
    roleId: ID,
    name: Type.String(),
  }),
  UserRolesChanged: closed('A user gained or lost custom roles.', {
    added: Strings('Role names gained.'),
    removed: Strings('Role names lost.'),
    via: Type.Union(
      [
        Type.Literal('admin'),
        Type.Literal('group'),
        Type.Literal('sso'),
        Type.Literal('invite'),
        Type.Literal('import'),
      ],
      { description: 'What changed them.' },
    ),
  }),
  GroupProvisioned: closed('SCIM created a group.', {
    via: Type.String({ description: 'scim' }),
    groupId: ID,
    displayName: Type.String(),
    members: Count('The members it was created with.'),
  }),
  GroupUpdated: closed('A group was changed: by SCIM, or its roles by an admin.', {
    via: Type.String({ description: 'scim, or admin for its roles (PUT groups/{id}/roles).' }),
    groupId: ID,
    displayName: Type.String(),
    fields: Strings('The fields the change set (displayName, externalId, members, roles).'),
    membersAdded: Type.Optional(Count('Members added.')),
    membersRemoved: Type.Optional(Count('Members removed.')),
    rolesAdded: Type.Optional(Strings('Role names the group gained.')),
    rolesRemoved: Type.Optional(Strings('Role names the group lost.')),
  }),
  GroupDeprovisioned: closed('SCIM deleted a group (its members lose the roles it gave).', {
    via: Type.String({ description: 'scim' }),
    groupId: ID,
    displayName: Type.String(),
  }),
  OrganizationCreated: closed('An organization was created.', {
    organizationId: ID,
    name: Type.String(),
  }),
  OrganizationUpdated: closed('An organization was changed.', {
    organizationId: ID,
    name: Type.String(),
    fields: Strings('The fields the change set.'),
  }),
  OrganizationDeleted: closed(
    'An organization was deleted (with its memberships and invitations).',
    {
      organizationId: ID,
      name: Type.String(),
      ssoConnections: Type.Optional(
        Strings('The SSO connections that named it: they name none now, and still sign in.'),
      ),
    },
  ),
  OrganizationMemberAdded: closed('A user became a member of an organization.', {
    organizationId: ID,
    roles: Strings('The organization roles it holds there.'),
    via: Type.String({ description: 'admin, invite, jit or sso.' }),
    connectionId: Type.Optional(
      Type.String({ description: 'The SSO connection whose sign-in made it (via sso).' }),
    ),
  }),
  OrganizationMemberRemoved: closed('A user stopped being a member of an organization.', {
    organizationId: ID,
    via: Type.String({ description: 'admin, or user_deleted when the account was deleted.' }),
  }),
  OrganizationMemberRolesChanged: closed('A member’s organization roles changed.', {
    organizationId: ID,
    added: Strings('Role names gained.'),
    removed: Strings('Role names lost.'),
    via: Type.String({ description: 'admin, invite, jit or sso.' }),
  }),
  OrganizationInvitationCreated: closed('An invitation to an organization was created.', {
    organizationId: ID,
    invitationId: ID,
    roles: Strings('The organization roles given on accepting.'),
    emailSent: Type.Boolean(),
  }),
  OrganizationInvitationAccepted: closed('An invitation to an organization was accepted.', {
    organizationId: ID,
    invitationId: ID,
    newUser: Type.Boolean({ description: 'Whether accepting signed the invitee up.' }),
  }),
  OrganizationInvitationRevoked: closed('An invitation to an organization was revoked.', {
    organizationId: ID,
    invitationId: ID,
    reason: Type.String({ description: 'admin, or replaced by a newer invitation.' }),
  }),
  UserImpersonated: closed(
    'An administrator signed in as the user (the actor is the administrator).',
    {
      reason: Type.String({ description: 'Why, as the administrator gave it.' }),
      sessionId: ID,
    },
  ),
} satisfies Record<AuditAction, MetadataSchema>

/** The metadata an event of this schema carries: open ones any field beyond those named. */
type MetadataOf<S extends MetadataSchema> = S extends { additionalProperties: true }
  ? Static<S> & { [field: string]: unknown }
  : keyof S['properties'] extends never
    ? Record<string, never>
    : Static<S>

/** Each action's metadata type, as the map declares it. */
export type AuditMetadata = { [A in AuditAction]: MetadataOf<(typeof AUDIT_EVENTS)[A]> }

/** One event to append: its action, and that action's metadata (events.ts). */
export type AuditEntryOf<A extends AuditAction> = {
  action: A
  /** The user the event concerns. */
  userId?: string | null
  /** The address concerned, kept for search (a failed login's attempted email). */
  email?: string | null
  metadata?: AuditMetadata[A]
}

/** Any event: the union over every action, so `action` decides what `metadata` may hold. */
export type AuditEntry = { [A in AuditAction]: AuditEntryOf<A> }[AuditAction]
