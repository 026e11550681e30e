// Every operation of the served OpenAPI document, by operationId: its method and path.
// The types come from generated/openapi.ts; this table only adds what types cannot carry
// at run time. `satisfies` makes tsc refuse a missing or unknown operationId, and
// sdk/test/client.test.ts checks each entry against GET /v1/openapi.json.
import type { operations, paths } from './generated/openapi.ts'

export type OperationId = keyof operations
export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch'

export const OPERATIONS = {
  getHealth: ['get', '/health'],
  getReadiness: ['get', '/ready'],
  getOpenApiDocument: ['get', '/v1/openapi.json'],
  getJwks: ['get', '/.well-known/jwks.json'],
  createTenant: ['post', '/v1/tenants'],
  acceptInvite: ['post', '/v1/invites/accept'],
  signup: ['post', '/v1/{tenantSlug}/auth/signup'],
  login: ['post', '/v1/{tenantSlug}/auth/login'],
  refreshSession: ['post', '/v1/{tenantSlug}/auth/refresh'],
  logout: ['post', '/v1/{tenantSlug}/auth/logout'],
  logoutAll: ['post', '/v1/{tenantSlug}/auth/logout-all'],
  getMe: ['get', '/v1/{tenantSlug}/me'],
  updateMe: ['patch', '/v1/{tenantSlug}/me'],
  deleteMe: ['delete', '/v1/{tenantSlug}/me'],
  changePassword: ['patch', '/v1/{tenantSlug}/me/password'],
  setPassword: ['post', '/v1/{tenantSlug}/me/password'],
  forgetRememberedDevices: ['delete', '/v1/{tenantSlug}/me/remembered-devices'],
  reauthenticate: ['post', '/v1/{tenantSlug}/me/reauthenticate'],
  reauthenticationOptions: ['post', '/v1/{tenantSlug}/me/reauthenticate/options'],
  listMySessions: ['get', '/v1/{tenantSlug}/me/sessions'],
  endMySession: ['delete', '/v1/{tenantSlug}/me/sessions/{id}'],
  listMyApplications: ['get', '/v1/{tenantSlug}/me/applications'],
  revokeMyApplication: ['delete', '/v1/{tenantSlug}/me/applications/{clientId}'],
  getAuthConfig: ['get', '/v1/{tenantSlug}/auth/config'],
  requestLoginCode: ['post', '/v1/{tenantSlug}/auth/request-login-code'],
  getCaptchaChallenge: ['get', '/v1/{tenantSlug}/captcha/challenge'],
  verifyLoginCode: ['post', '/v1/{tenantSlug}/auth/verify-login-code'],
  requestPasswordReset: ['post', '/v1/{tenantSlug}/auth/request-password-reset'],
  resetPassword: ['post', '/v1/{tenantSlug}/auth/reset-password'],
  requestEmailVerification: ['post', '/v1/{tenantSlug}/auth/request-email-verification'],
  verifyEmail: ['post', '/v1/{tenantSlug}/auth/verify-email'],
  enrollTotp: ['post', '/v1/{tenantSlug}/mfa/totp/enroll'],
  verifyTotp: ['post', '/v1/{tenantSlug}/mfa/totp/verify'],
  regenerateRecoveryCodes: ['post', '/v1/{tenantSlug}/mfa/recovery-codes/regenerate'],
  initialEnrollTotp: ['post', '/v1/{tenantSlug}/auth/totp/initial-enroll'],
  initialVerifyTotp: ['post', '/v1/{tenantSlug}/auth/totp/initial-verify'],
  requestEmailOtp: ['post', '/v1/{tenantSlug}/auth/request-email-otp'],
  passkeyRegistrationOptions: ['post', '/v1/{tenantSlug}/me/passkeys/registration-options'],
  registerPasskey: ['post', '/v1/{tenantSlug}/me/passkeys'],
  listPasskeys: ['get', '/v1/{tenantSlug}/me/passkeys'],
  deletePasskey: ['delete', '/v1/{tenantSlug}/me/passkeys/{id}'],
  passkeySignInOptions: ['post', '/v1/{tenantSlug}/auth/passkey/options'],
  passkeySignIn: ['post', '/v1/{tenantSlug}/auth/passkey/verify'],
  setIdpCredentials: ['put', '/v1/{tenantSlug}/oauth/idp/credentials'],
  deleteIdpCredentials: ['delete', '/v1/{tenantSlug}/oauth/idp/credentials'],
  startIdpSignIn: ['get', '/v1/{tenantSlug}/oauth/idp/start'],
  finishIdpSignIn: ['get', '/v1/{tenantSlug}/oauth/idp/callback'],
  getTenant: ['get', '/v1/{tenantSlug}/tenant'],
  updateTenant: ['patch', '/v1/{tenantSlug}/tenant'],
  dryRunPolicy: ['post', '/v1/{tenantSlug}/policy/dry-run'],
  setTenantLogo: ['put', '/v1/{tenantSlug}/tenant/logo'],
  deleteTenantLogo: ['delete', '/v1/{tenantSlug}/tenant/logo'],
  deleteTenant: ['delete', '/v1/{tenantSlug}/tenant'],
  getTenantLogo: ['get', '/v1/{tenantSlug}/logo'],
  listUsers: ['get', '/v1/{tenantSlug}/users'],
  deleteUser: ['delete', '/v1/{tenantSlug}/users/{userId}'],
  updateUser: ['patch', '/v1/{tenantSlug}/users/{userId}'],
  importUsers: ['post', '/v1/{tenantSlug}/users/import'],
  disableUserTotp: ['post', '/v1/{tenantSlug}/users/{userId}/totp/disable'],
  impersonateUser: ['post', '/v1/{tenantSlug}/users/{userId}/impersonate'],
  unlockUser: ['post', '/v1/{tenantSlug}/users/{userId}/unlock'],
  eraseUser: ['post', '/v1/{tenantSlug}/users/{userId}/erase'],
  exportPersonalData: ['post', '/v1/{tenantSlug}/me/export'],
  listUserSessions: ['get', '/v1/{tenantSlug}/users/{userId}/sessions'],
  endUserSession: ['delete', '/v1/{tenantSlug}/users/{userId}/sessions/{id}'],
  listApiKeys: ['get', '/v1/{tenantSlug}/api-keys'],
  createApiKey: ['post', '/v1/{tenantSlug}/api-keys'],
  revokeApiKey: ['delete', '/v1/{tenantSlug}/api-keys/{id}'],
  listInvites: ['get', '/v1/{tenantSlug}/invites'],
  createInvite: ['post', '/v1/{tenantSlug}/invites'],
  revokeInvite: ['delete', '/v1/{tenantSlug}/invites/{id}'],
  listAuditEvents: ['get', '/v1/{tenantSlug}/audit'],
  listPermissions: ['get', '/v1/{tenantSlug}/permissions'],
  listRoles: ['get', '/v1/{tenantSlug}/roles'],
  createRole: ['post', '/v1/{tenantSlug}/roles'],
  getRole: ['get', '/v1/{tenantSlug}/roles/{id}'],
  updateRole: ['patch', '/v1/{tenantSlug}/roles/{id}'],
  deleteRole: ['delete', '/v1/{tenantSlug}/roles/{id}'],
  setUserRoles: ['put', '/v1/{tenantSlug}/users/{userId}/roles'],
  listGroups: ['get', '/v1/{tenantSlug}/groups'],
  setGroupRoles: ['put', '/v1/{tenantSlug}/groups/{id}/roles'],
  listOrganizations: ['get', '/v1/{tenantSlug}/organizations'],
  createOrganization: ['post', '/v1/{tenantSlug}/organizations'],
  getOrganization: ['get', '/v1/{tenantSlug}/organizations/{id}'],
  updateOrganization: ['patch', '/v1/{tenantSlug}/organizations/{id}'],
  deleteOrganization: ['delete', '/v1/{tenantSlug}/organizations/{id}'],
  listOrganizationMembers: ['get', '/v1/{tenantSlug}/organizations/{id}/members'],
  setOrganizationMember: ['put', '/v1/{tenantSlug}/organizations/{id}/members/{userId}'],
  removeOrganizationMember: ['delete', '/v1/{tenantSlug}/organizations/{id}/members/{userId}'],
  listMyOrganizations: ['get', '/v1/{tenantSlug}/me/organizations'],
  createOrganizationInvitation: ['post', '/v1/{tenantSlug}/organizations/{id}/invitations'],
  listOrganizationInvitations: ['get', '/v1/{tenantSlug}/organizations/{id}/invitations'],
  revokeOrganizationInvitation: [
    'delete',
    '/v1/{tenantSlug}/organizations/{id}/invitations/{invitationId}',
  ],
  acceptOrganizationInvitation: ['post', '/v1/{tenantSlug}/organization-invitations/accept'],
  exportAuditEvents: ['get', '/v1/{tenantSlug}/audit/export'],
  introspectToken: ['post', '/v1/{tenantSlug}/oauth/introspect'],
  createApplication: ['post', '/v1/{tenantSlug}/applications'],
  listApplications: ['get', '/v1/{tenantSlug}/applications'],
  getApplication: ['get', '/v1/{tenantSlug}/applications/{id}'],
  updateApplication: ['patch', '/v1/{tenantSlug}/applications/{id}'],
  deleteApplication: ['delete', '/v1/{tenantSlug}/applications/{id}'],
  rotateApplicationSecret: ['post', '/v1/{tenantSlug}/applications/{id}/secret'],
  createApiResource: ['post', '/v1/{tenantSlug}/api-resources'],
  listApiResources: ['get', '/v1/{tenantSlug}/api-resources'],
  getApiResource: ['get', '/v1/{tenantSlug}/api-resources/{id}'],
  updateApiResource: ['patch', '/v1/{tenantSlug}/api-resources/{id}'],
  deleteApiResource: ['delete', '/v1/{tenantSlug}/api-resources/{id}'],
  createWebhook: ['post', '/v1/{tenantSlug}/webhooks'],
  listWebhooks: ['get', '/v1/{tenantSlug}/webhooks'],
  getWebhook: ['get', '/v1/{tenantSlug}/webhooks/{id}'],
  updateWebhook: ['patch', '/v1/{tenantSlug}/webhooks/{id}'],
  deleteWebhook: ['delete', '/v1/{tenantSlug}/webhooks/{id}'],
  rotateWebhookSecret: ['post', '/v1/{tenantSlug}/webhooks/{id}/secret'],
  listWebhookDeliveries: ['get', '/v1/{tenantSlug}/webhooks/{id}/deliveries'],
  retryWebhookDelivery: ['post', '/v1/{tenantSlug}/webhooks/{id}/deliveries/{deliveryId}/retry'],
  testWebhook: ['post', '/v1/{tenantSlug}/webhooks/{id}/test'],
  createSsoConnection: ['post', '/v1/{tenantSlug}/sso-connections'],
  listSsoConnections: ['get', '/v1/{tenantSlug}/sso-connections'],
  getSsoConnection: ['get', '/v1/{tenantSlug}/sso-connections/{id}'],
  updateSsoConnection: ['patch', '/v1/{tenantSlug}/sso-connections/{id}'],
  deleteSsoConnection: ['delete', '/v1/{tenantSlug}/sso-connections/{id}'],
  createSocialConnection: ['post', '/v1/{tenantSlug}/social-connections'],
  listSocialConnections: ['get', '/v1/{tenantSlug}/social-connections'],
  getSocialConnection: ['get', '/v1/{tenantSlug}/social-connections/{id}'],
  updateSocialConnection: ['patch', '/v1/{tenantSlug}/social-connections/{id}'],
  deleteSocialConnection: ['delete', '/v1/{tenantSlug}/social-connections/{id}'],
  listMyIdentities: ['get', '/v1/{tenantSlug}/me/identities'],
  removeMyIdentity: ['delete', '/v1/{tenantSlug}/me/identities/{id}'],
  createHook: ['post', '/v1/{tenantSlug}/hooks'],
  listHooks: ['get', '/v1/{tenantSlug}/hooks'],
  getHook: ['get', '/v1/{tenantSlug}/hooks/{id}'],
  updateHook: ['patch', '/v1/{tenantSlug}/hooks/{id}'],
  deleteHook: ['delete', '/v1/{tenantSlug}/hooks/{id}'],
  testHook: ['post', '/v1/{tenantSlug}/hooks/{id}/test'],
  listHookCalls: ['get', '/v1/{tenantSlug}/hooks/{id}/calls'],
  listEmailTemplates: ['get', '/v1/{tenantSlug}/email-templates'],
  putEmailTemplate: ['put', '/v1/{tenantSlug}/email-templates/{kind}/{locale}'],
  deleteEmailTemplate: ['delete', '/v1/{tenantSlug}/email-templates/{kind}/{locale}'],
  previewEmailTemplate: ['post', '/v1/{tenantSlug}/email-templates/{kind}/{locale}/preview'],
} as const satisfies { [K in OperationId]: readonly [HttpMethod, keyof paths] }

type Table = typeof OPERATIONS
/** Compile-time check: the path item's method in `paths` is the operation it is listed as. */
type Mismatched = {
  [K in OperationId]: paths[Table[K][1]][Table[K][0]] extends operations[K] ? never : K
}[OperationId]
export const TABLE_MATCHES_PATHS: [Mismatched] extends [never] ? true : Mismatched = true

type Op<K extends OperationId> = operations[K]

type PathParams<K extends OperationId> = Op<K>['parameters'] extends { path: infer P }
  ? Omit<P, 'tenantSlug'>
  : Record<never, never>
type PathPart<K extends OperationId> = keyof PathParams<K> extends never
  ? { path?: undefined }
  : { path: PathParams<K> }

type QueryOf<K extends OperationId> = NonNullable<Op<K>['parameters']['query']>
type QueryPart<K extends OperationId> = [QueryOf<K>] extends [never]
  ? { query?: undefined }
  : Op<K>['parameters'] extends { query: object }
    ? { query: QueryOf<K> }
    : { query?: QueryOf<K> }

type BodyOf<K extends OperationId> =
  NonNullable<Op<K>['requestBody']> extends {
    content: { 'application/json': infer B }
  }
    ? B
    : never
type BodyPart<K extends OperationId> = [BodyOf<K>] extends [never]
  ? { body?: undefined }
  : Op<K> extends { requestBody: object }
    ? { body: BodyOf<K> }
    : { body?: BodyOf<K> }

/** What every call takes besides its parameters. */
export interface CallOptions {
  /** A bearer token for this call (an access token or an API key), over the client's. */
  token?: string
  headers?: Record<string, string>
  signal?: AbortSignal
}

/** The argument of the method for operation K: `path` (except the tenant), `query`, `body`. */
export type OperationInput<K extends OperationId> = PathPart<K> &
  QueryPart<K> &
  BodyPart<K> &
  CallOptions

/** The argument list: optional when the operation needs no parameter. */
export type OperationArgs<K extends OperationId> =
  Record<never, never> extends OperationInput<K>
    ? [input?: OperationInput<K>]
    : [input: OperationInput<K>]

type Responses<K extends OperationId> = Op<K>['responses']
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204>
type ContentOf<R> = R extends { content: { 'application/json': infer J } }
  ? J
  : R extends { content: object }
    ? Blob
    : undefined

/** What the method for operation K resolves to: the JSON of its success response. */
export type OperationData<K extends OperationId> = ContentOf<Responses<K>[SuccessStatus<K>]>
