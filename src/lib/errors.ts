// One error type and one catalogue of reasons (CONTRACT §3). The JSON envelope
// `{ code, message, details? }` is a public contract: codes follow the status only.

export const CODE_BY_STATUS = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  429: 'TOO_MANY_REQUESTS',
  431: 'HEADERS_TOO_LARGE',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
} as const

export type ErrorStatus = keyof typeof CODE_BY_STATUS

/** Every `details.reason` the service answers with, and its status and default message. */
export const REASONS = {
  validation: [400, 'The request is not valid.'],
  malformed_json: [400, 'The request body is not valid JSON.'],
  unsupported_media_type: [400, 'The request body must be application/json.'],
  body_too_large: [400, 'The request body is too large.'],
  invalid_slug: [400, 'This slug is not allowed.'],
  limit_exceeded: [400, 'The workspace already has as many of these as it may.'],
  password_too_weak: [400, 'This password is too common or too easy to guess.'],
  password_breached: [400, 'This password appears in a data breach; choose another.'],
  insufficient_contrast: [
    400,
    'The primary colour is too light for white button text: a contrast of at least 4.5:1 is needed.',
  ],
  email_taken: [400, 'An account with this email already exists.'],
  captcha_required: [400, 'This workspace asks for a CAPTCHA: send captchaToken.'],
  captcha_invalid: [400, 'The CAPTCHA answer is not valid, has expired or was already used.'],
  invalid_logo: [400, 'The logo is not a valid image of the stated type.'],
  idp_not_configured: [400, 'Sign-in through the identity provider is not configured.'],
  invalid_state: [400, 'The sign-in state is unknown, used or expired.'],
  handoff_invalid: [
    400,
    'The console handoff is unknown, used, expired or for another browser: sign in to the console.',
  ],
  invalid_credentials: [401, 'Invalid email or password.'],
  invalid_code: [401, 'The code is wrong or has expired.'],
  invalid_mfa_code: [401, 'The second-factor code is wrong or has expired.'],
  mfa_required: [401, 'A second factor is required.'],
  mfa_not_enrolled: [401, 'A second factor is required, but none is enrolled.'],
  password_login_disabled: [401, 'This workspace does not accept passwords.'],
  token_invalid: [401, 'The token is not valid.'],
  token_expired: [401, 'The token has expired.'],
  token_missing: [401, 'A bearer token is required.'],
  session_revoked: [401, 'The session has ended.'],
  refresh_token_reused: [401, 'The refresh token was already used; the session has ended.'],
  account_suspended: [401, 'This account is suspended.'],
  invalid_api_key: [401, 'The API key is not valid.'],
  user_token_required: [401, 'This route needs a user access token.'],
  reauthentication_required: [
    401,
    'This change needs a recent sign-in: confirm it is you with me/reauthenticate.',
  ],
  invalid_invite: [401, 'The invitation is not valid.'],
  invite_expired: [401, 'The invitation has expired.'],
  idp_error: [401, 'The identity provider refused the sign-in.'],
  idp_exchange_failed: [401, 'The identity provider sign-in could not be completed.'],
  email_not_verified: [403, 'The email address is not verified yet.'],
  passkeys_disabled: [403, 'This workspace does not accept passkeys.'],
  passwordless_disabled: [403, 'This workspace does not accept emailed codes.'],
  mfa_disabled: [403, 'Multi-factor authentication is disabled in this workspace.'],
  api_key_not_allowed: [403, 'API keys cannot use this route.'],
  admin_required: [403, 'This route needs an administrator.'],
  permission_required: [403, 'This needs a permission the caller does not hold.'],
  not_a_member: [403, 'The user is not a member of this organization.'],
  invite_email_mismatch: [403, 'The invitation is for another address.'],
  builtin_role: [403, 'A built-in role cannot be changed or deleted.'],
  last_admin: [403, 'The last administrator cannot be removed.'],
  impersonation_forbidden: [
    403,
    'Not while impersonating, nor of an administrator, oneself or an inactive user.',
  ],
  hook_denied: [403, 'This was refused by the workspace.'],
  credential_protected: [
    403,
    "An API key or an import cannot set this user's password or address (README, Security).",
  ],
  sso_required: [403, 'This address signs in through its organisation’s single sign-on.'],
  sso_user_not_provisioned: [403, 'This single sign-on connection cannot sign this user in here.'],
  signup_disabled: [403, 'This sign-in would create an account, and this connection creates none.'],
  identity_linked_elsewhere: [409, 'This identity is already linked to another account.'],
  last_sign_in_method: [
    409,
    'This is the account’s last way to sign in: add a password, a passkey or another identity first.',
  ],
  password_exists: [
    409,
    'The account already has a password: change it with PATCH me/password and the current one.',
  ],
  tenant_creation_forbidden: [401, 'A tenant creation token is required.'],
  tenant_not_found: [404, 'No such workspace.'],
  route_not_found: [404, 'No such route.'],
  not_found: [404, 'Not found.'],
  method_not_allowed: [
    405,
    'This method is not allowed here; the Allow header lists those that are.',
  ],
  slug_taken: [409, 'This slug is taken.'],
  name_taken: [409, 'A role of this workspace already has this name.'],
  domain_taken: [409, 'Another SSO connection of this workspace already owns this domain.'],
  identifier_taken: [409, 'An API resource of this workspace already has this identifier.'],
  entity_id_taken: [409, 'A SAML application of this workspace already has this entity id.'],
  already_member: [409, 'This address already belongs to a member.'],
  already_enrolled: [409, 'An authenticator is already enrolled.'],
  invite_used: [409, 'The invitation was already accepted.'],
  hook_exists: [409, 'The workspace already has a hook for this event.'],
  request_timeout: [408, 'The request did not arrive in time.'],
  headers_too_large: [431, 'The request headers are too large.'],
  rate_limited: [429, 'Too many requests; try again later.'],
  internal: [500, 'Something went wrong.'],
  unavailable: [503, 'The service is not available.'],
} as const satisfies Record<string, readonly [ErrorStatus, string]>

export type Reason = keyof typeof REASONS

export interface ErrorBody {
  code: string
  message: string
  details?: Record<string, unknown>
}

export class AppError extends Error {
  readonly status: ErrorStatus
  readonly reason: Reason
  readonly details: Record<string, unknown>
  /** Seconds, for 429 answers (Retry-After). */
  readonly retryAfter: number | undefined

  constructor(
    reason: Reason,
    options: {
      message?: string
      details?: Record<string, unknown>
      retryAfter?: number
      /** For a route whose documented statuses differ from the reason's usual one. */
      status?: ErrorStatus
    } = {},
  ) {
    const [status, message] = REASONS[reason]
    super(options.message ?? message)
    this.status = options.status ?? status
    this.reason = reason
    this.details = options.details ?? {}
    this.retryAfter = options.retryAfter
  }

  toBody(): ErrorBody {
    return {
      code: CODE_BY_STATUS[this.status],
      message: this.message,
      details: { reason: this.reason, ...this.details },
    }
  }
}

export function fail(reason: Reason, options?: ConstructorParameters<typeof AppError>[1]): never {
  throw new AppError(reason, options)
}
