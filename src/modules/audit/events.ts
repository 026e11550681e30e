// Typed events (issue 36, Structure; Logto's DataHookContextMap): one map from each audit
// action to the metadata its event carries. The append (recorder.ts) takes entries typed by
// it, so a call site cannot write a field its action does not declare, nor misspell one; the
// same type is what the audit list, the export and a webhook's `data.event.metadata` show.
// Every field is optional where one call site writes it and another does not.
import type { AuditAction } from './actions.ts'

/** An ISO 8601 time, as the metadata stores it. */
type Iso = string

/**
 * A sign-in's metadata: how it was proved (`via`, `method`) and the proof's own fields (the
 * identity provider's issuer and subject, a passkey, the SSO connection...), which the sign-in
 * pipeline passes through from each first factor; hence the open rest.
 */
export interface SignInMetadata {
  via?: string
  method?: string
  email?: string | null
  reason?: string
  route?: string
  clientId?: string
  connectionId?: string
  [field: string]: unknown
}

interface Changed {
  fields?: string[]
  changes?: unknown
}

interface Session {
  sessionId?: string
  reason?: string
}

export interface AuditMetadata {
  UserSignup: SignInMetadata & { role?: string; status?: string; inviteId?: string }
  UserLogin: SignInMetadata & { linked?: boolean }
  UserLoginFailed: SignInMetadata
  UserLogout: { sessionId?: string; via?: string; all?: boolean; count?: number }
  UserPasswordChanged: { via?: string; sessionsEnded: number }
  UserEmailVerified: SignInMetadata & { inviteId?: string }
  UserSoftDeleted: { by?: string; via?: string; sessionsEnded?: number }
  UserHardDeleted: { deletedAt?: Iso; retentionDays?: number; [field: string]: unknown }
  UserUpdated: Changed & { via?: string; [field: string]: unknown }
  MfaTotpEnrolled: { via?: unknown }
  MfaTotpDisabled: { by?: string; wasEnabled?: boolean; sessionsEnded?: number }
  MfaTotpVerified: { via?: unknown; flow?: string }
  MfaEmailOtpSent: { email?: string }
  MfaEmailOtpVerified: Record<string, never>
  MfaEmailOtpFailed: { reason?: string }
  InviteCreated: {
    inviteId: string
    role?: string
    roles?: string[]
    expiresAt?: Iso
    sendEmail?: boolean
  }
  InviteAccepted: {
    inviteId: string
    role?: string
    invitedBy?: string | null
    pendingUserActivated?: boolean
  }
  InviteRevoked: { inviteId: string; reason: string; supersededBy?: string }
  InviteExpired: { inviteId: string; expiredAt?: Iso }
  ApiKeyCreated: {
    apiKeyId: string
    name?: string
    environment?: string
    prefix?: string
    expiresAt?: Iso | null
    permissions?: string[]
  }
  ApiKeyRevoked: { apiKeyId: string; name?: string; prefix?: string }
  SessionCreated: Session
  SessionRevoked: Session
  SessionFamilyCompromised: Session
  TenantCreated: { slug?: string; name?: string; plan?: string }
  TenantUpdated: Changed & { mimeType?: string; bytes?: number; removed?: boolean }
  TenantSoftDeleted: { slug?: string; sessionsEnded?: number; confirmedWith?: string }
  GdprExportRequested: Record<string, never>
  GdprExportCompleted: {
    sessions?: number
    auditEvents?: number
    truncated?: { sessions: boolean; auditEvents: boolean }
  }
  GdprErasureRequested: { by?: string }
  GdprErasureCompleted: { auditEventsScrubbed?: number; invitesRevoked?: number }
  IdpOauthLinked: { clientId?: string }
  IdpOauthUnlinked: Record<string, never>
  PasswordlessCodeSent: { email?: string }
  PasswordlessCodeVerified: Record<string, never>
  PasswordlessCodeFailed: { email?: string; reason?: string }
  PasswordResetRequested: { email?: string }
  MfaRecoveryCodeUsed: { remaining: number }
  MfaRecoveryCodesRegenerated: { count: number }
  PasskeyRegistered: { passkeyId: string; deviceType?: string | null; backedUp?: boolean }
  PasskeyRemoved: { passkeyId: string }
  ApplicationCreated: {
    applicationId: string
    clientId: string
    name?: string
    type?: string
    dynamic?: boolean
  }
  ApplicationUpdated: { applicationId: string; clientId: string; changes?: unknown }
  ApplicationDeleted: { applicationId: string; clientId: string; name?: string }
  ApplicationSecretRotated: { applicationId: string; clientId: string }
  ApplicationConsentGranted: { clientId: string; scopes: string[] }
  ApplicationConsentRevoked: { clientId: string; name?: string; scopes?: string[] }
  ApiResourceCreated: { apiResourceId: string; identifier: string; name?: string }
  ApiResourceUpdated: { apiResourceId: string; identifier: string; changes?: unknown }
  ApiResourceDeleted: { apiResourceId: string; identifier: string; name?: string }
  UserProvisioned: { via: string; active?: boolean }
  UserDeprovisioned: { via?: string; by?: string; sessionsEnded?: number }
  UserImported: { outcome: string; hashType?: string }
  WebhookCreated: { webhookId: string; url?: string; events?: string[] }
  WebhookUpdated: { webhookId: string; changed?: string[] }
  WebhookDeleted: { webhookId: string; url?: string }
  WebhookSecretRotated: { webhookId: string }
  WebhookDisabled: { webhookId: string; url?: string; failingSince?: Iso }
  SsoConnectionCreated: { connectionId: string; name?: string; type?: string; domains?: string[] }
  SsoConnectionUpdated: { connectionId: string; changed?: string[] }
  SsoConnectionDeleted: { connectionId: string; name?: string; type?: string }
  SsoIdentityLinked: { connectionId: string; subject?: string }
  RoleCreated: {
    roleId: string
    name: string
    kind: string
    permissions: string[]
    resourceScopes: { resource: string; scopes: string[] }[]
  }
  RoleUpdated: { roleId: string; name: string; fields: string[] }
  RoleDeleted: { roleId: string; name: string }
  UserRolesChanged: {
    added: string[]
    removed: string[]
    via: 'admin' | 'group' | 'sso' | 'invite' | 'import'
  }
}

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
