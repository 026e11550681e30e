// RFC 8707 resource indicators against the tenant's API resources (CONTRACT §11): a
// `resource` names one of them by its identifier (else invalid_target); the token is a JWT
// (RFC 9068) with `aud` = the identifier, the resource's lifetime, and the scopes the
// resource defines, cut to what the client may have:
//   - a machine app by client credentials: its allowedScopes; asking for a scope beyond
//     them (or one the resource does not define) is invalid_scope, never silently dropped;
//   - an interactive app: at the authorization endpoint every scope of the resource (the
//     hosted pages cut the grant to the user's roles at consent, web/pages/authorize.ts); at
//     the token endpoint (code, refresh token, device code) only the scopes the grant's
//     user's roles grant as they are now (base role and custom roles, CONTRACT §17 Tokens:
//     roles/resource-scopes.ts), so a demoted Admin's old refresh token, a custom role
//     taken away, or a new authorization over the grant made before, mints no scope the
//     user no longer has (oidc-provider issues the token's scopes cut to these). The grant
//     itself is left as it is: given the role again, the user has them back;
//   - an organization token (CONTRACT §18: a code authorized with organization_id, a
//     refresh with it; organizations.ts): at the token endpoint only the scopes that the
//     member's roles in that organization list, the base role and tenant roles adding none.
// A grant (the consent's, the first-party one of provider.ts) may hold what either grants
// (grantableScopes): each token is cut to its own kind at issue, so the grant made for an
// organization serves a plain token's scopes too, and the other way round.
import type { Handle } from '../../db/client.ts'
import { findApiResourceByIdentifier } from '../apiresources/indicators.ts'
import { heldOrganizationRoles } from '../organizations/claims.ts'
import {
  organizationScopesGranted,
  type ScopedResource,
  userResourceScopes,
} from '../roles/resource-scopes.ts'
import type { OrganizationToken } from './organizations.ts'

/** oidc-provider's error classes (it ships no types). */
export interface ProviderErrors {
  InvalidTarget: new (description?: string) => Error
  InvalidScope: new (description: string, scope: string) => Error
}

interface ResourceContext {
  oidc: {
    route?: string
    params: { grant_type?: string; scope?: string }
    grant?: { accountId?: string }
  }
}

interface ProviderClient {
  metadata(): Record<string, unknown>
}

/**
 * The scopes of `resource` an authorization may grant the user now: those its roles grant
 * (base and custom, CONTRACT §17) and those its roles in any organization of the tenant list
 * (§18). The rest are rejected in the grant (provider.ts, web/pages/authorize.ts).
 */
export async function grantableScopes(
  db: Handle,
  tenantId: string,
  resource: ScopedResource,
  accountId: string,
): Promise<string[]> {
  const own = new Set(await userResourceScopes(db, tenantId, resource, accountId))
  const inOrganizations = organizationScopesGranted(
    resource,
    await heldOrganizationRoles(db, tenantId, accountId),
  )
  for (const scope of inOrganizations) own.add(scope)
  return resource.scopes.map((s) => s.name).filter((name) => own.has(name))
}

/** The same by the resource's identifier: none for an unknown resource. */
export async function grantableScopesOf(
  db: Handle,
  tenantId: string,
  identifier: string,
  accountId: string,
): Promise<string[]> {
  const resource = await findApiResourceByIdentifier(db, tenantId, identifier)
  return resource ? grantableScopes(db, tenantId, resource, accountId) : []
}

/**
 * `organizationOf` answers the organization a token request is for (organizations.ts), or
 * undefined for a plain token.
 */
export function resourceServerInfo(
  db: Handle,
  tenantId: string,
  errors: ProviderErrors,
  organizationOf: (ctx: never) => Promise<OrganizationToken | undefined>,
) {
  return async (ctx: ResourceContext, identifier: string, client: ProviderClient) => {
    const resource = await findApiResourceByIdentifier(db, tenantId, identifier)
    if (!resource) throw new errors.InvalidTarget('unknown resource indicator')
    const defined = resource.scopes.map((s) => s.name)
    const metadata = client.metadata()
    let scopes = defined
    if (metadata.app_type === 'machine') {
      const allowed = new Set((metadata.allowed_scopes as string[] | undefined) ?? [])
      scopes = defined.filter((s) => allowed.has(s))
      if (ctx.oidc.params.grant_type === 'client_credentials') {
        const granted = new Set(scopes)
        for (const asked of (ctx.oidc.params.scope ?? '').split(' ').filter(Boolean)) {
          if (!granted.has(asked)) {
            throw new errors.InvalidScope('requested scope is not allowed for this client', asked)
          }
        }
      }
    } else if (ctx.oidc.route === 'token' && ctx.oidc.grant?.accountId) {
      const organization = await organizationOf(ctx as never)
      scopes = organization
        ? organizationScopesGranted(resource, organization.roles)
        : await userResourceScopes(db, tenantId, resource, ctx.oidc.grant.accountId)
    }
    return {
      scope: scopes.join(' '),
      audience: resource.identifier,
      accessTokenTTL: resource.accessTokenTtlSeconds,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'RS256' } },
    }
  }
}
