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
//     itself is left as it is: given the role again, the user has them back.
import type { Db } from '../../db/client.ts'
import { findApiResourceByIdentifier } from '../apiresources/indicators.ts'
import { grantedScopes, userResourceScopes } from '../roles/resource-scopes.ts'

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

/** The scopes of the tenant's resource `identifier` the user may be granted now. */
export const roleScopes = grantedScopes

export function resourceServerInfo(db: Db, tenantId: string, errors: ProviderErrors) {
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
      scopes = await userResourceScopes(db, tenantId, resource, ctx.oidc.grant.accountId)
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
