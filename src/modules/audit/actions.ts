// Audit actions: the spec's Events list, the three Passwordless* actions that are kept
// apart from MFA, and UserUpdated (CONTRACT §2, PATCH users).

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

export const AUDIT_ACTIONS = [...SPEC_ACTIONS, ...PASSWORDLESS_ACTIONS, 'UserUpdated'] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]
