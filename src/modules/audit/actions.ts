// Audit actions: the spec's Events list, the three Passwordless* actions that are kept
// apart from MFA, UserUpdated (CONTRACT §2, PATCH users) and the account lifecycle's (§9).

export const SPEC_ACTIONS = [
  'UserSignup',
  'UserLogin',
  'UserLoginFailed',
  'UserLogout',
  'UserPasswordChanged',
  'UserEmailVerified',
  'UserSoftDeleted',
  'UserHardDeleted',
  'MfaTotpEnrolled',
  'MfaTotpDisabled',
  'MfaTotpVerified',
  'MfaEmailOtpSent',
  'MfaEmailOtpVerified',
  'MfaEmailOtpFailed',
  'InviteCreated',
  'InviteAccepted',
  'InviteRevoked',
  'InviteExpired',
  'ApiKeyCreated',
  'ApiKeyRevoked',
  'SessionCreated',
  'SessionRevoked',
  'SessionFamilyCompromised',
  'TenantCreated',
  'TenantUpdated',
  'TenantSoftDeleted',
  'GdprExportRequested',
  'GdprExportCompleted',
  'GdprErasureRequested',
  'GdprErasureCompleted',
  'IdpOauthLinked',
  'IdpOauthUnlinked',
] as const

export const PASSWORDLESS_ACTIONS = [
  'PasswordlessCodeSent',
  'PasswordlessCodeVerified',
  'PasswordlessCodeFailed',
] as const

/** CONTRACT §9, the account lifecycle. */
export const LIFECYCLE_ACTIONS = [
  'PasswordResetRequested',
  'MfaRecoveryCodeUsed',
  'MfaRecoveryCodesRegenerated',
  'PasskeyRegistered',
  'PasskeyRemoved',
  // CONTRACT §21: an admin ended a user's sign-in failure lock.
  'UserUnlocked',
  // CONTRACT §21: a user's remembered devices were forgotten.
  'RememberedDevicesForgotten',
] as const

/** CONTRACT §11, the OpenID provider's applications and API resources. */
export const OIDC_ACTIONS = [
  'ApplicationCreated',
  'ApplicationUpdated',
  'ApplicationDeleted',
  'ApplicationSecretRotated',
  'ApplicationConsentGranted',
  'ApplicationConsentRevoked',
  'ApiResourceCreated',
  'ApiResourceUpdated',
  'ApiResourceDeleted',
] as const

/** CONTRACT §14, SCIM provisioning (each with metadata.via = "scim"; UserUpdated too). */
export const PROVISIONING_ACTIONS = ['UserProvisioned', 'UserDeprovisioned'] as const

/** CONTRACT §14, the user import. */
export const IMPORT_ACTIONS = ['UserImported'] as const

/** CONTRACT §13, webhooks. */
export const WEBHOOK_ACTIONS = [
  'WebhookCreated',
  'WebhookUpdated',
  'WebhookDeleted',
  'WebhookSecretRotated',
  'WebhookDisabled',
] as const

/** CONTRACT §21, blocking hooks. */
export const HOOK_ACTIONS = ['HookCreated', 'HookUpdated', 'HookDeleted', 'HookDenied'] as const

/** CONTRACT §20, mail templates (saved or reset to the default). */
export const TEMPLATE_ACTIONS = ['EmailTemplateUpdated'] as const

/** CONTRACT §12, enterprise SSO connections. */
export const SSO_ACTIONS = [
  'SsoConnectionCreated',
  'SsoConnectionUpdated',
  'SsoConnectionDeleted',
  'SsoIdentityLinked',
] as const

/** CONTRACT §19, social sign-in connections and the identities linked through them. */
export const SOCIAL_ACTIONS = [
  'SocialConnectionCreated',
  'SocialConnectionUpdated',
  'SocialConnectionDeleted',
  'IdentityLinked',
  'IdentityUnlinked',
] as const

/** CONTRACT §17, roles and their assignment. */
export const ROLE_ACTIONS = [
  'RoleCreated',
  'RoleUpdated',
  'RoleDeleted',
  'UserRolesChanged',
  // CONTRACT §22: an admin signed in as a user.
  'UserImpersonated',
] as const

/** CONTRACT §17, groups (SCIM 2.0 Groups; a group's roles set by the admin API). */
export const GROUP_ACTIONS = ['GroupProvisioned', 'GroupUpdated', 'GroupDeprovisioned'] as const

/** CONTRACT §18, organizations inside a tenant (each with metadata.organizationId). */
export const ORGANIZATION_ACTIONS = [
  'OrganizationCreated',
  'OrganizationUpdated',
  'OrganizationDeleted',
  'OrganizationMemberAdded',
  'OrganizationMemberRemoved',
  'OrganizationMemberRolesChanged',
  'OrganizationInvitationCreated',
  'OrganizationInvitationAccepted',
  'OrganizationInvitationRevoked',
] as const

export const AUDIT_ACTIONS = [
  ...SPEC_ACTIONS,
  ...PASSWORDLESS_ACTIONS,
  'UserUpdated',
  ...LIFECYCLE_ACTIONS,
  ...OIDC_ACTIONS,
  ...PROVISIONING_ACTIONS,
  ...IMPORT_ACTIONS,
  ...WEBHOOK_ACTIONS,
  ...HOOK_ACTIONS,
  ...TEMPLATE_ACTIONS,
  ...SSO_ACTIONS,
  ...SOCIAL_ACTIONS,
  ...ROLE_ACTIONS,
  ...GROUP_ACTIONS,
  ...ORGANIZATION_ACTIONS,
] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]
