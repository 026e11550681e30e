// OAuth 2.0 Token Exchange (RFC 8693; CONTRACT §22) as an oidc-provider grant type
// (provider.registerGrantType): a confidential application with `tokenExchange` (its
// client metadata then lists the grant, clients.ts; oidc-provider has authenticated it and
// refuses any other client with unauthorized_client) hands in a user's access token of this
// tenant as `subject_token` and gets an access token for one of the tenant's API resources
// (`resource`, RFC 8707), with the scopes of that resource the user's role grants now.
//
// The subject token is one of:
//   - an access token this tenant's provider issued: opaque (found in its storage, so a
//     revoked token, a deleted grant or an ended provider session is not found) or a JWT
//     for a resource (RFC 9068: the issuer's signature and lifetime; it cannot be revoked
//     before it expires);
//   - the service's own access token (CONTRACT §4) of this tenant, while its session is live.
// Its user must be an Active user of the tenant. Anything else, another tenant's token
// among them, is invalid_grant (RFC 8693 §2.2.2). With `actor_token` the client's own
// client-credentials token of this issuer, the new token says who acts (§4.1:
// `act: {sub: <client id>}`). A DPoP proof binds the new token as at every grant.
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import { jwtVerify } from 'jose'
// @ts-expect-error: oidc-provider ships no type declarations.
import { errors } from 'oidc-provider'
// @ts-expect-error: oidc-provider's DPoP check, used by its own grants.
import validateDpop, { checkDpopReplay } from 'oidc-provider/lib/helpers/validate_dpop.js'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { AccessTokens } from '../../lib/jwt.ts'
import { findApiResourceByIdentifier } from '../apiresources/indicators.ts'
import { findLiveSession } from '../introspection/live-session.ts'
import { grantedScopes } from '../roles/resource-scopes.ts'
import type { RevocationCache } from '../sessions/revocations.ts'
import { accountFinder } from './account.ts'
import { TOKEN_EXCHANGE } from './clients.ts'

/** RFC 8693 §3. */
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'
const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt'

export const TOKEN_EXCHANGE_PARAMETERS = [
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'requested_token_type',
  'resource',
  'audience',
  'scope',
]

interface ExchangeContext {
  oidc: {
    params: Record<string, string | undefined>
    client: { clientId: string; metadata(): Record<string, unknown> }
    entity(name: string, value: unknown): void
  }
  body: unknown
}

interface StoredToken {
  accountId?: string
  clientId: string
  grantId?: string
  isExpired: boolean
}

/** What the exchange needs of the service (provider.ts's ProviderDeps has it all). */
export interface ExchangeDeps {
  db: Db
  clock: Clock
  tokens: Pick<AccessTokens, 'verify'>
  revocations: Pick<RevocationCache, 'has'>
  jwks: { keys: (JsonWebKey & { kid?: string })[] }
}

/** What the exchange reads of a Provider (the package ships no types). */
interface ExchangeProvider {
  issuer: string
  Grant: { find(id: string): Promise<unknown> }
  AccessToken: {
    new (fields: Record<string, unknown>): IssuedToken
    find(value: string): Promise<StoredToken | undefined>
  }
  ClientCredentials: { find(value: string): Promise<StoredToken | undefined> }
  ResourceServer: new (identifier: string, info: Record<string, unknown>) => unknown
  registerGrantType(name: string, handler: unknown, params: string[], dupes?: string[]): void
}

interface IssuedToken {
  resourceServer: unknown
  extra?: Record<string, unknown>
  scope?: string
  expiration: number
  tokenType: string
  setThumbprint(prop: string, value: string): void
  save(): Promise<string>
}

const refuse = (description: string) => new errors.InvalidGrant(description)

export function registerTokenExchange(provider: unknown, deps: ExchangeDeps, tenantId: string) {
  const p = provider as ExchangeProvider
  const verifyKeys = publicKeys(deps)
  const issuer = p.issuer

  /** A JWT access token of this issuer (RFC 9068), or undefined when it is none. */
  async function providerJwt(token: string) {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = verifyKeys.get(String(header.kid))
          if (!key) throw new Error('unknown key')
          return key
        },
        { issuer, typ: 'at+jwt' },
      )
      return payload
    } catch {
      return undefined
    }
  }

  /** The user a subject token speaks for, or invalid_grant. */
  async function subjectUser(token: string): Promise<string> {
    if (token.split('.').length === 3) {
      const claims = await providerJwt(token)
      if (claims) {
        // A client-credentials JWT has the client as its subject: no user.
        if (typeof claims.sub !== 'string' || claims.sub === claims.client_id) {
          throw refuse('subject_token is not a user’s token')
        }
        return claims.sub
      }
      return serviceTokenUser(token)
    }
    const stored = await p.AccessToken.find(token)
    if (!stored || stored.isExpired || !stored.accountId) {
      throw refuse('subject_token is not an active access token of this issuer')
    }
    if (stored.grantId && !(await p.Grant.find(stored.grantId))) {
      throw refuse('subject_token’s grant was revoked')
    }
    return stored.accountId
  }

  /** CONTRACT §4's own access token of this tenant, while its session is live. */
  async function serviceTokenUser(token: string): Promise<string> {
    const now = deps.clock.now()
    let claims: { sub: string; tid: string; sid: string; exp: number }
    try {
      claims = deps.tokens.verify(token, now)
    } catch {
      throw refuse('subject_token is not an access token of this tenant')
    }
    if (claims.tid !== tenantId || claims.exp <= Math.floor(now.getTime() / 1000)) {
      throw refuse('subject_token is not an access token of this tenant')
    }
    if (deps.revocations.has(claims.sid)) throw refuse('subject_token’s session has ended')
    const live = await findLiveSession(deps.db, tenantId, claims.sid, claims.sub, now)
    if (live?.status !== 'Active') throw refuse('subject_token’s session has ended')
    return claims.sub
  }

  /** RFC 8693 §4.1: the client's own client-credentials token as the actor. */
  async function actor(token: string, clientId: string): Promise<{ sub: string }> {
    const claims = token.split('.').length === 3 ? await providerJwt(token) : undefined
    const stored = claims ? undefined : await p.ClientCredentials.find(token)
    const ownerId = claims ? claims.client_id : stored && !stored.isExpired && stored.clientId
    const subject = claims ? claims.sub : stored?.clientId
    if (ownerId !== clientId || subject !== clientId) {
      throw refuse('actor_token must be this client’s own client-credentials token')
    }
    return { sub: clientId }
  }

  async function handler(ctx: ExchangeContext) {
    const { params, client } = ctx.oidc
    const subjectToken = params.subject_token
    if (!subjectToken) throw new errors.InvalidRequest('missing required parameter subject_token')
    const types = [ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE]
    if (!types.includes(String(params.subject_token_type))) {
      throw new errors.InvalidRequest('subject_token_type must be an access token type')
    }
    if (params.requested_token_type && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest('only access tokens are issued')
    }
    if (params.actor_token && !types.includes(String(params.actor_token_type))) {
      throw new errors.InvalidRequest('actor_token_type must be an access token type')
    }
    const identifier = params.resource ?? params.audience
    if (!identifier) throw new errors.InvalidTarget('resource is required')
    const resource = await findApiResourceByIdentifier(deps.db, tenantId, identifier)
    if (!resource) throw new errors.InvalidTarget('unknown resource indicator')

    const dPoP = await validateDpop(provider, ctx)
    const accountId = await subjectUser(subjectToken)
    const account = await accountFinder(deps.db, tenantId)(ctx, accountId)
    if (!account) throw refuse('subject_token’s user is not an active user of this tenant')
    const act = params.actor_token ? await actor(params.actor_token, client.clientId) : undefined

    // CONTRACT §22: within what the user's role grants now (CONTRACT §11's scope rule).
    const mayHave = new Set(await grantedScopes(deps.db, tenantId, identifier, accountId))
    const asked = (params.scope ?? '').split(' ').filter(Boolean)
    for (const scope of asked) {
      if (!mayHave.has(scope)) {
        throw new errors.InvalidScope('requested scope is not granted to the user', scope)
      }
    }
    const scope = (asked.length > 0 ? asked : [...mayHave]).join(' ')
    if (!scope) throw new errors.InvalidScope('the user is granted no scope of the resource', '')

    const token = new p.AccessToken({
      accountId,
      client,
      gty: 'token_exchange',
      scope,
      ...(act ? { extra: { act } } : {}),
    })
    token.resourceServer = new p.ResourceServer(identifier, {
      audience: resource.identifier,
      scope: resource.scopes.map((s) => s.name).join(' '),
      accessTokenTTL: resource.accessTokenTtlSeconds,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'RS256' } },
    })
    if (dPoP) {
      await checkDpopReplay(provider, ctx, dPoP, client.clientId)
      token.setThumbprint('jkt', dPoP.thumbprint)
    } else if (client.metadata().dpop_bound_access_tokens === true) {
      throw refuse('DPoP proof JWT not provided')
    }
    ctx.oidc.entity('AccessToken', token)
    const value = await token.save()
    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: token.tokenType,
      expires_in: token.expiration,
      scope,
    }
  }

  p.registerGrantType(TOKEN_EXCHANGE, handler, TOKEN_EXCHANGE_PARAMETERS)
}

/** The issuer's verifying keys by kid (the private members of the signing JWKs left out). */
function publicKeys(deps: ExchangeDeps): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>()
  for (const jwk of deps.jwks.keys) {
    keys.set(String(jwk.kid), createPublicKey({ key: jwk, format: 'jwk' }))
  }
  return keys
}
