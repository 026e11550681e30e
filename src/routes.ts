// Every module, registered here explicitly. Hook order (onRequest, in this order):
// tenant resolution (404 for an unknown or malformed slug) → input hygiene (400 for a NUL
// or lone surrogate in the path, query or User-Agent) → authentication (401/403); then
// Fastify parses the body, hygiene checks its strings (preValidation), the schema
// validates it (400) → the route's declared per-address budget (preHandler, 429) → the
// route's declared CAPTCHA (preHandler, 400 captcha_required / captcha_invalid) → the
// handler.
import type { FastifyInstance } from 'fastify'
import type { Deps } from './deps.ts'
import { accountRoutes } from './modules/account/routes.ts'
import { apiKeyRoutes } from './modules/apikeys/routes.ts'
import { apiResourceRoutes } from './modules/apiresources/routes.ts'
import { applicationRoutes } from './modules/applications/routes.ts'
import { auditRoutes } from './modules/audit/routes.ts'
import { installCaptchaGuard } from './modules/captcha/guard.ts'
import { captchaRoutes } from './modules/captcha/routes.ts'
import { connectedApplicationRoutes } from './modules/connectedapps/routes.ts'
import { oauthRoutes } from './modules/federation/idp/routes.ts'
import { ssoOidcRoutes } from './modules/federation/oidc-routes.ts'
import { ssoConnectionRoutes } from './modules/federation/routes.ts'
import { ssoSamlRoutes } from './modules/federation/saml-routes.ts'
import { identityRoutes } from './modules/federation/social/identities-routes.ts'
import { socialConnectionRoutes } from './modules/federation/social/routes.ts'
import { groupRoutes } from './modules/groups/routes.ts'
import { hookRoutes } from './modules/hooks/routes.ts'
import { importRoutes } from './modules/import/routes.ts'
import { introspectionRoutes, jwksRoutes } from './modules/introspection/routes.ts'
import { inviteAcceptRoutes, inviteRoutes } from './modules/invites/routes.ts'
import { mfaRoutes } from './modules/mfa/routes.ts'
import { oidcRoutes } from './modules/oidc/routes.ts'
import { organizationInvitationRoutes } from './modules/organizations/invitation-routes.ts'
import { organizationRoutes } from './modules/organizations/routes.ts'
import { passkeyRoutes } from './modules/passkeys/routes.ts'
import { passwordlessRoutes } from './modules/passwordless/routes.ts'
import { policyRoutes } from './modules/policy/routes.ts'
import { privacyRoutes } from './modules/privacy/routes.ts'
import { roleRoutes } from './modules/roles/routes.ts'
import { samlIdpRoutes } from './modules/samlidp/routes.ts'
import { SCIM_PREFIX } from './modules/scim/errors.ts'
import { scimRoutes } from './modules/scim/routes.ts'
import { serviceRoutes } from './modules/service/routes.ts'
import { sessionManagementRoutes } from './modules/sessions/manage-routes.ts'
import { sessionRoutes } from './modules/sessions/routes.ts'
import { stepUpRoutes } from './modules/stepup/routes.ts'
import { templateRoutes } from './modules/templates/routes.ts'
import { tenantAdminRoutes } from './modules/tenants/admin-routes.ts'
import { tenantRoutes } from './modules/tenants/routes.ts'
import { userAdminRoutes } from './modules/users/admin-routes.ts'
import { meRoutes } from './modules/users/routes.ts'
import { webhookRoutes } from './modules/webhooks/routes.ts'
import { installAuthentication } from './plugins/auth.ts'
import { installInputHygiene } from './plugins/hygiene.ts'
import { installRateLimits } from './plugins/rate-limits.ts'
import { installTenantResolution } from './plugins/tenant.ts'
import { consoleRoutes } from './web/console.ts'
import { installIdpHandoff } from './web/idp.ts'
import { landingRoutes } from './web/pages/landing.ts'
import { assetRoutes, pageRoutes } from './web/routes.ts'

const TENANT = '/v1/:tenantSlug'

export async function registerRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  installTenantResolution(app, deps)
  installInputHygiene(app)
  installAuthentication(app, deps)
  installRateLimits(app, deps)
  installCaptchaGuard(app, deps)
  installIdpHandoff(app, deps)

  await app.register(serviceRoutes, { deps })
  await app.register(jwksRoutes, { deps })
  await app.register(tenantRoutes, { deps })
  // A static path: find-my-way prefers it to /v1/:tenantSlug/… (and `invites` is a reserved slug).
  await app.register(inviteAcceptRoutes, { deps })
  await app.register(sessionRoutes, { deps, prefix: TENANT })
  await app.register(meRoutes, { deps, prefix: TENANT })
  await app.register(stepUpRoutes, { deps, prefix: TENANT })
  await app.register(sessionManagementRoutes, { deps, prefix: TENANT })
  await app.register(passwordlessRoutes, { deps, prefix: TENANT })
  await app.register(captchaRoutes, { deps, prefix: TENANT })
  await app.register(accountRoutes, { deps, prefix: TENANT })
  await app.register(mfaRoutes, { deps, prefix: TENANT })
  await app.register(passkeyRoutes, { deps, prefix: TENANT })
  await app.register(oauthRoutes, { deps, prefix: TENANT })
  await app.register(tenantAdminRoutes, { deps, prefix: TENANT })
  await app.register(policyRoutes, { deps, prefix: TENANT })
  await app.register(userAdminRoutes, { deps, prefix: TENANT })
  await app.register(importRoutes, { deps, prefix: TENANT })
  await app.register(apiKeyRoutes, { deps, prefix: TENANT })
  await app.register(inviteRoutes, { deps, prefix: TENANT })
  await app.register(auditRoutes, { deps, prefix: TENANT })
  await app.register(roleRoutes, { deps, prefix: TENANT })
  await app.register(groupRoutes, { deps, prefix: TENANT })
  await app.register(organizationRoutes, { deps, prefix: TENANT })
  await app.register(organizationInvitationRoutes, { deps, prefix: TENANT })
  await app.register(privacyRoutes, { deps, prefix: TENANT })
  await app.register(introspectionRoutes, { deps, prefix: TENANT })
  await app.register(applicationRoutes, { deps, prefix: TENANT })
  await app.register(webhookRoutes, { deps, prefix: TENANT })
  await app.register(hookRoutes, { deps, prefix: TENANT })
  await app.register(templateRoutes, { deps, prefix: TENANT })
  await app.register(ssoConnectionRoutes, { deps, prefix: TENANT })
  await app.register(ssoOidcRoutes, { deps, prefix: TENANT })
  await app.register(ssoSamlRoutes, { deps, prefix: TENANT })
  await app.register(socialConnectionRoutes, { deps, prefix: TENANT })
  await app.register(identityRoutes, { deps, prefix: TENANT })
  await app.register(apiResourceRoutes, { deps, prefix: TENANT })
  await app.register(connectedApplicationRoutes, { deps, prefix: TENANT })
  // SCIM 2.0 provisioning (/scim/v2/{slug}/…): API keys only, SCIM's own errors and body type.
  await app.register(scimRoutes, { deps, prefix: SCIM_PREFIX })
  // The tenants' OpenID Providers (/oidc/{slug}/…), each a raw oidc-provider instance.
  await app.register(oidcRoutes, { deps })
  // The tenants' SAML identity providers (/saml/{slug}/…, CONTRACT §22).
  await app.register(samlIdpRoutes, { deps })
  // The hosted pages: documents for people, a client of the routes above (src/web/).
  await app.register(assetRoutes)
  await app.register(consoleRoutes)
  await app.register(landingRoutes, { deps })
  await app.register(pageRoutes, { deps, root: app, prefix: '/t/:tenantSlug' })
}
