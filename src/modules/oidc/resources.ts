// RFC 8707 resource indicators against the tenant's API resources (CONTRACT §11): a
// `resource` names one of them by its identifier (else invalid_target); the token is a JWT
// (RFC 9068) with `aud` = the identifier, the resource's lifetime, and the scopes the
// resource defines, cut to what the client may have:
//   - a machine app by client credentials: its allowedScopes; asking for a scope beyond
//     them (or one the resource does not define) is invalid_scope, never silently dropped;
//   - an interactive app: every scope of the resource (the user's role decides at consent,
//     which the hosted pages will do).
import type { Db } from '../../db/client.ts'
import { findApiResourceByIdentifier } from '../apiresources/queries.ts'

/** oidc-provider's error classes (it ships no types). */
export interface ProviderErrors {
  InvalidTarget: new (description?: string) => Error
  InvalidScope: new (description: string, scope: string) => Error
}

interface ResourceContext {
  oidc: { params: { grant_type?: string; scope?: string } }
}

interface ProviderClient {
  metadata(): Record<string, unknown>
}

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
