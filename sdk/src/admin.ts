// The administration calls an API key may make (CONTRACT §4, §11): users, invites, audit,
// the tenant and its logo, token introspection, applications and API resources, groups,
// organizations. Routes
// that refuse keys (api-keys, IdP credentials, /me, mfa) are left out, so calling them
// does not type-check.
import { type Client, createClient, type FetchLike } from './client.ts'

export const ADMIN_OPERATIONS = [
  'listUsers',
  'updateUser',
  'importUsers',
  'deleteUser',
  'disableUserTotp',
  'unlockUser',
  'eraseUser',
  'listUserSessions',
  'endUserSession',
  'listInvites',
  'createInvite',
  'revokeInvite',
  'listAuditEvents',
  'exportAuditEvents',
  'getTenant',
  'updateTenant',
  'setTenantLogo',
  'deleteTenantLogo',
  'introspectToken',
  'createApplication',
  'listApplications',
  'getApplication',
  'updateApplication',
  'deleteApplication',
  'rotateApplicationSecret',
  'createApiResource',
  'listApiResources',
  'getApiResource',
  'updateApiResource',
  'deleteApiResource',
  'createWebhook',
  'listWebhooks',
  'getWebhook',
  'updateWebhook',
  'deleteWebhook',
  'rotateWebhookSecret',
  'listWebhookDeliveries',
  'retryWebhookDelivery',
  'testWebhook',
  'createSsoConnection',
  'listSsoConnections',
  'getSsoConnection',
  'updateSsoConnection',
  'deleteSsoConnection',
  'createSocialConnection',
  'listSocialConnections',
  'getSocialConnection',
  'updateSocialConnection',
  'deleteSocialConnection',
  'listGroups',
  'setGroupRoles',
  'listOrganizations',
  'createOrganization',
  'getOrganization',
  'updateOrganization',
  'deleteOrganization',
  'listOrganizationMembers',
  'setOrganizationMember',
  'removeOrganizationMember',
  'createOrganizationInvitation',
  'listOrganizationInvitations',
  'revokeOrganizationInvitation',
  'createHook',
  'listHooks',
  'getHook',
  'updateHook',
  'deleteHook',
  'testHook',
  'listHookCalls',
  'listEmailTemplates',
  'putEmailTemplate',
  'deleteEmailTemplate',
  'previewEmailTemplate',
] as const satisfies readonly (keyof Client)[]

export type AdminClient = Pick<Client, (typeof ADMIN_OPERATIONS)[number]>

export interface AdminClientOptions {
  baseUrl: string
  tenant: string
  /** An API key of the tenant, `ak_live_…` or `ak_test_…`. */
  apiKey: string
  fetch?: FetchLike
}

/** A client for a back end administering one tenant with an API key. */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const client = createClient({
    baseUrl: options.baseUrl,
    tenant: options.tenant,
    fetch: options.fetch,
    token: options.apiKey,
  })
  const admin: Partial<AdminClient> = {}
  for (const id of ADMIN_OPERATIONS) Object.assign(admin, { [id]: client[id] })
  return admin as AdminClient
}
