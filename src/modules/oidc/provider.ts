// One oidc-provider instance for one tenant (CONTRACT §11): issuer
// {PUBLIC_URL}/oidc/{slug}, its storage the tenant's rows of oidc_models (adapter.ts), its
// clients the tenant's applications (clients.ts), its accounts the tenant's Active users
// (account.ts), its resources the tenant's API resources (resources.ts). Every option set
// here says which rule it implements; the rest are oidc-provider's defaults.
import { createHmac } from 'node:crypto'
// @ts-expect-error: oidc-provider ships no type declarations.
import Provider, { errors, interactionPolicy } from 'oidc-provider'
import type { Config } from '../../config.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { AppError } from '../../lib/errors.ts'
import type { AccessTokens } from '../../lib/jwt.ts'
import type { Actor, AuditRecorder } from '../audit/recorder.ts'
import { findLiveSession } from '../introspection/live-session.ts'
import type { RevocationCache } from '../sessions/revocations.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { accountFinder } from './account.ts'
import { issuerPath, openSignIn, SERVICE_SESSION, signInCookie } from './browser-sign-in.ts'
import { adapterFor } from './device.ts'
import { providerFetch } from './fetch.ts'
import type { SigningJwk } from './keys.ts'
import {
  acceptOrganizationAtRefresh,
  askedOrganization,
  authorizationOrganization,
  carryOrganization,
  ORGANIZATION_ID,
  organizationParameter,
  organizationPrompts,
  tokenOrganization,
} from './organizations.ts'
import type { ProviderPages } from './pages.ts'
import { registrationFeature, registrationGate } from './registration.ts'
import { atomicReplayDetection } from './replay.ts'
import { requestMemo } from './request-memo.ts'
import { grantableScopesOf, type ProviderErrors, resourceServerInfo } from './resources.ts'
import { registerTokenExchange } from './token-exchange.ts'

/** An interaction of oidc-provider, as the hosted pages read it. */
export interface OidcInteraction {
  uid: string
  iat: number
  exp: number
  returnTo: string
  grantId?: string
  session?: { accountId?: string }
  params: Record<string, string | undefined> & { client_id: string }
  prompt: {
    name: 'login' | 'consent' | string
    reasons: string[]
    details: {
      missingOIDCScope?: string[]
      missingOIDCClaims?: string[]
      missingResourceScopes?: Record<string, string[]>
    }
  }
}

export interface OidcGrant {
  getOIDCScopeEncountered(): string
  getOIDCClaimsEncountered(): string[]
  getResourceScopeEncountered(resource: string): string
  addOIDCScope(scope: string): void
  addOIDCClaims(claims: string[]): void
  addResourceScope(resource: string, scope: string): void
  rejectResourceScope(resource: string, scope: string): void
  /** What the grant rejected: the resource scopes by resource indicator, space-separated. */
  rejected?: { resources?: Record<string, string> }
  save(): Promise<string>
}

/** What this service uses of an oidc-provider instance (the package ships no types). */
export interface OidcProvider {
  issuer: string
  proxy: boolean
  callback(): (req: unknown, res: unknown) => void
  /** A Koa middleware run before every route. */
  use(middleware: typeof registrationGate): void
  interactionDetails(req: unknown, res: unknown): Promise<OidcInteraction>
  interactionResult(req: unknown, res: unknown, result: Record<string, unknown>): Promise<string>
  Grant: {
    new (fields: { accountId: string; clientId: string }): OidcGrant
    find(id: string): Promise<OidcGrant | undefined>
  }
  Client: { find(id: string): Promise<{ metadata(): Record<string, unknown> } | undefined> }
}

export interface ProviderDeps {
  config: Pick<
    Config,
    'publicUrl' | 'trustProxy' | 'encryptionKeys' | 'oidcBackchannelAllowLoopback'
  >
  db: Db
  cipher: FieldCipher
  clock: Clock
  audit: AuditRecorder
  jwks: { keys: SigningJwk[] }
  /** The service's own access tokens (CONTRACT §4), a token exchange's subject (token-exchange.ts). */
  tokens: Pick<AccessTokens, 'verify'>
  revocations: Pick<RevocationCache, 'has'>
  /** The pages the provider draws, handed in by the hosted pages (pages.ts). */
  pages: ProviderPages
  /**
   * The claims the tenant's custom_access_token hook adds to an access token (CONTRACT
   * §21): `userId` undefined for client credentials. Throws AppError hook_denied when the
   * hook refuses under onFailure deny.
   */
  hookClaims: (
    tenant: Pick<Tenant, 'id' | 'slug'>,
    userId: string | undefined,
    clientId: string,
    actor: Actor,
  ) => Promise<Record<string, unknown>>
}

const DAY = 24 * 60 * 60

/** What extraTokenClaims reads of oidc-provider's Koa context and token (no types shipped). */
interface KoaLike {
  ip?: string
  get?: (header: string) => string
}
interface MintedToken {
  kind: string
  accountId?: string
  clientId: string
  extra?: Record<string, unknown>
}

export function issuerOf(publicUrl: string, slug: string): string {
  return `${publicUrl}/oidc/${slug}`
}

/**
 * The secret of the DPoP nonces (RFC 9449 §8), derived from ENCRYPTION_KEYS' first key so
 * every instance issues and accepts the same ones.
 */
export function dpopNonceSecret(config: Pick<Config, 'encryptionKeys'>): Buffer {
  return createHmac('sha256', config.encryptionKeys[0].key).update('oidc-provider dpop').digest()
}

/**
 * The keys that sign the provider's cookies (interaction and session), derived from
 * ENCRYPTION_KEYS so every instance holds the same ones and a key rotation keeps the
 * cookies of the previous key readable (the first signs, all verify).
 */
export function cookieKeys(config: Pick<Config, 'encryptionKeys'>): string[] {
  return config.encryptionKeys.map(({ key }) =>
    createHmac('sha256', key).update('oidc-provider cookies').digest('base64url'),
  )
}

const FIRST_PARTY_OFFLINE = 'x_first_party_offline'

interface AuthorizationContext {
  method: string
  query: Record<string, unknown>
  oidc: {
    params: { scope?: string; response_type?: string }
    body?: Record<string, unknown>
  }
}

interface AuthorizationClient {
  metadata(): Record<string, unknown>
  grantTypeAllowed(type: string): boolean
}

async function firstPartyOffline(
  ctx: AuthorizationContext,
  _value: unknown,
  client?: AuthorizationClient,
) {
  if (client?.metadata().first_party !== true) return
  if (!client.grantTypeAllowed('refresh_token')) return
  const { params } = ctx.oidc
  if (!params.response_type?.split(' ').includes('code')) return
  const sent = ctx.method === 'POST' ? ctx.oidc.body?.scope : ctx.query.scope
  if (typeof sent !== 'string' || !sent.split(' ').includes('offline_access')) return
  const scopes = params.scope?.split(' ') ?? []
  if (scopes.includes('openid') && !scopes.includes('offline_access')) {
    params.scope = [...scopes, 'offline_access'].join(' ')
  }
}

interface PolicyContext {
  cookies: { get(name: string, options: { signed: boolean }): string | undefined }
  oidc: {
    session: { accountId?: string; [SERVICE_SESSION]?: string }
    result?: { login?: Record<string, unknown> }
  }
}

/**
 * CONTRACT §11, Sign-in: a hosted-page session is reused only while it is live. The
 * provider keeps its own session (the `_session` cookie, 14 days); this check of the login
 * prompt asks for a sign-in again once the service session it was signed in from is
 * revoked (sign-out, logout-all, password change or reset, suspension, deletion) or
 * expired, or its user is no longer Active: the browser then goes to the interaction page,
 * which finds no live page session and shows the sign-in page, and prompt=none answers
 * login_required. A login just finished (the resumed request) records its service session
 * in the provider session first, and a provider session without one is never reused. Nor
 * is one signed in from another service session than the browser's latest hosted-page
 * sign-in (browser-sign-in.ts): after another sign-in in this browser (another user's, say)
 * the hosted pages sign the provider in again, as the page's user.
 */
function hostedSessionCheck(deps: ProviderDeps, tenantId: string, tenantSlug: string) {
  return new interactionPolicy.Check(
    'hosted_session_ended',
    'End-User authentication is required',
    'login_required',
    (ctx: PolicyContext) => hostedSessionEnded(deps, tenantId, tenantSlug, ctx),
  )
}

/** Whether the provider session's account may not be reused (hostedSessionCheck). */
async function hostedSessionEnded(
  deps: ProviderDeps,
  tenantId: string,
  tenantSlug: string,
  ctx: PolicyContext,
) {
  const { session, result } = ctx.oidc
  // Without an account the base `no_session` check asks for the sign-in.
  if (!session.accountId) return false
  if (result?.login) {
    const fresh = result.login[SERVICE_SESSION]
    const sid = typeof fresh === 'string' ? fresh : undefined
    if (session[SERVICE_SESSION] !== sid) session[SERVICE_SESSION] = sid
  }
  const sid = session[SERVICE_SESSION]
  if (!sid) return true
  const name = signInCookie(deps.config.publicUrl, tenantSlug).name
  const browser = ctx.cookies.get(name, { signed: false })
  if (openSignIn(deps.cipher, tenantId, browser) !== sid) return true
  const now = deps.clock.now()
  const live = await findLiveSession(deps.db, tenantId, sid, session.accountId, now)
  return live?.status !== 'Active'
}

interface GrantContext extends PolicyContext {
  oidc: PolicyContext['oidc'] & {
    client: { clientId: string; metadata(): Record<string, unknown> }
    account?: { accountId: string }
    session: PolicyContext['oidc']['session'] & { grantIdFor(clientId: string): string }
    result?: { login?: Record<string, unknown>; consent?: { grantId?: string } }
    requestParamOIDCScopes: Set<string>
    requestParamScopes: Set<string>
    requestParamClaims: Set<string>
    resourceServers: Record<string, { scopes: Set<string> }>
    provider: OidcProvider
  }
}

/**
 * CONTRACT §11, Consent; OIDC Core §3.1.2.1: a first-party application is pre-configured
 * consent. oidc-provider's default finds the grant the browser's session holds for the
 * client; for a first-party application this also grants, without the interaction page,
 * whatever the request asks that the grant has not met yet: its OpenID scopes and claims,
 * and its resource scopes cut to what the user's roles grant, its organization roles
 * included (resources.ts, grantableScopes; the others rejected, as the hosted consent does,
 * web/pages/authorize.ts). So prompt=none into a first-party application
 * the user has not used yet answers a code, not consent_required. Only while the
 * provider session may be reused (hostedSessionEnded): a stale one goes to the sign-in
 * first, and grants nothing as its earlier user. Nor for a request of an organization the
 * user is no member of (CONTRACT §18): access_denied.
 */
function loadExistingGrant(deps: ProviderDeps, tenantId: string, tenantSlug: string) {
  const organizationOf = authorizationOrganization(deps, tenantId)
  return async (ctx: GrantContext) => {
    const { oidc } = ctx
    const accountId = oidc.account?.accountId
    // CONTRACT §18: a request for an organization the user is no member of ends here, with
    // access_denied, before any grant is made (organizations.ts); but only as the session's
    // user may go on (another user signed in on the hosted pages since: the sign-in first).
    if (
      accountId &&
      askedOrganization(ctx as never) &&
      !(await hostedSessionEnded(deps, tenantId, tenantSlug, ctx))
    ) {
      await organizationOf(ctx as never)
    }
    const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId)
    const found = grantId ? await oidc.provider.Grant.find(grantId) : undefined
    if (found && accountId && (await reopenRefused(deps, tenantId, found, ctx, accountId))) {
      await found.save()
    }
    if (oidc.client.metadata().first_party !== true || !accountId) return found
    if (await hostedSessionEnded(deps, tenantId, tenantSlug, ctx)) return found
    const grant = found ?? new oidc.provider.Grant({ accountId, clientId: oidc.client.clientId })
    let changed = !found
    const scopes = new Set(grant.getOIDCScopeEncountered().split(' '))
    const missingScopes = [...oidc.requestParamOIDCScopes].filter((s) => !scopes.has(s))
    if (missingScopes.length > 0) {
      grant.addOIDCScope(missingScopes.join(' '))
      changed = true
    }
    const claims = new Set(grant.getOIDCClaimsEncountered())
    const missingClaims = [...oidc.requestParamClaims].filter((c) => !claims.has(c))
    if (missingClaims.length > 0) {
      grant.addOIDCClaims(missingClaims)
      changed = true
    }
    for (const [indicator, server] of Object.entries(oidc.resourceServers)) {
      const met = new Set(grant.getResourceScopeEncountered(indicator).split(' '))
      const asked = [...oidc.requestParamScopes].filter((s) => server.scopes.has(s) && !met.has(s))
      if (asked.length === 0) continue
      const mayHave = new Set(await grantableScopesOf(deps.db, tenantId, indicator, accountId))
      const allowed = asked.filter((s) => mayHave.has(s))
      const refused = asked.filter((s) => !mayHave.has(s))
      if (allowed.length > 0) grant.addResourceScope(indicator, allowed.join(' '))
      if (refused.length > 0) grant.rejectResourceScope(indicator, refused.join(' '))
      changed = true
    }
    if (changed) await grant.save()
    return grant
  }
}

/**
 * CONTRACT §17, Tokens: a resource scope the grant rejected because the user's roles did not
 * grant it then (the consent's cut, web/pages/authorize.ts, or the first-party one above) is
 * asked again once they do: taken out of the grant's rejected scopes, so oidc-provider's
 * consent prompt (which asks only what the grant has neither granted nor rejected) asks it
 * of a third-party application's user, and a first-party application is granted it. Only the
 * scopes this request asks; answers whether the grant changed (the caller saves it).
 */
async function reopenRefused(
  deps: ProviderDeps,
  tenantId: string,
  grant: OidcGrant,
  ctx: GrantContext,
  accountId: string,
): Promise<boolean> {
  const rejected = grant.rejected?.resources
  if (!rejected) return false
  const asked = ctx.oidc.requestParamScopes
  let changed = false
  for (const indicator of Object.keys(ctx.oidc.resourceServers)) {
    const refused = (rejected[indicator] ?? '').split(' ').filter(Boolean)
    if (!refused.some((s) => asked.has(s))) continue
    const mayHave = new Set(await grantableScopesOf(deps.db, tenantId, indicator, accountId))
    const still = refused.filter((s) => !asked.has(s) || !mayHave.has(s))
    if (still.length === refused.length) continue
    // An empty entry is dropped by the grant's save (oidc-provider's Grant#clean).
    rejected[indicator] = still.join(' ')
    changed = true
  }
  return changed
}

/**
 * oidc-provider's login and consent, with the hosted session's check in the login, and
 * between the two the organization's (CONTRACT §18; organizations.ts): the picker of
 * prompt=select_organization and the checks of organization_id.
 */
function interactionsPolicy(deps: ProviderDeps, tenant: Pick<Tenant, 'id' | 'slug'>) {
  const policy = interactionPolicy.base()
  policy.get('login').checks.add(hostedSessionCheck(deps, tenant.id, tenant.slug))
  const [picker, organization] = organizationPrompts(deps, tenant.id)
  policy.add(picker, 1)
  policy.add(organization, 2)
  return policy
}

interface Caller {
  clientId: string
  clientAuthMethod: string
}

interface TokenLike {
  resourceServer?: { accessTokenTTL?: number }
}

export function buildProvider(deps: ProviderDeps, tenant: Pick<Tenant, 'id' | 'slug'>) {
  const { config } = deps
  const issuer = issuerOf(config.publicUrl, tenant.slug)
  const resourceTtl = (_ctx: unknown, token: TokenLike) =>
    token.resourceServer?.accessTokenTTL ?? 900
  const organizationOf = tokenOrganization(deps, tenant.id)
  const provider: OidcProvider = new Provider(issuer, {
    adapter: adapterFor(deps, tenant.id),
    jwks: deps.jwks,
    findAccount: accountFinder(deps.db, tenant.id),
    // Back-channel logout tokens go out through it (backchannel.ts).
    fetch: providerFetch(config),
    cookies: {
      keys: cookieKeys(config),
      // The provider session's cookie (`_session`) at the issuer's path, not `/`: every
      // tenant's issuer is on the one host, and each keeps a session of its own. The
      // interaction cookies (short) are set at their own pages' paths by oidc-provider.
      long: { httpOnly: true, sameSite: 'lax', path: issuerPath(config.publicUrl, tenant.slug) },
    },
    // `roles`: CONTRACT §17, Tokens; `organizations`: CONTRACT §18 (account.ts).
    scopes: ['openid', 'offline_access', 'email', 'profile', 'roles', 'organizations'],
    claims: {
      // CONTRACT §11, Tokens: every ID token carries auth_time and amr (RFC 8176), which
      // oidc-provider adds only when asked for unless the openid scope lists them (userinfo
      // has neither: they are no claims of the account).
      acr: null,
      amr: null,
      auth_time: null,
      iss: null,
      sid: null,
      openid: ['sub', 'auth_time', 'amr'],
      email: ['email', 'email_verified'],
      profile: ['name', 'given_name', 'family_name', 'updated_at'],
      roles: ['roles'],
      organizations: ['organizations', 'organization_roles'],
    },
    // CONTRACT §11 and the README's "Claims by scope (ID token and userinfo)": the ID token
    // carries the claims of the scopes granted (email, profile), not only userinfo, which
    // is what oidc-provider's default (true: OIDC Core §5.4's letter for a code flow) does.
    // Libraries that read the ID token alone (Auth.js, express-openid-connect, passport)
    // would otherwise have no address.
    conformIdTokenClaims: false,
    // CONTRACT §21: the tenant's custom_access_token hook's claims in every access token
    // the provider mints (JWT for a resource, opaque otherwise: then in introspection);
    // for client credentials the hook is told no user and the application's id.
    // oidc-provider replaces a token's `extra` with this answer when it is saved: a token
    // exchange's `act` (RFC 8693 §4.1, token-exchange.ts) is kept, and wins over the hook's.
    // An organization token (CONTRACT §18, organizations.ts) carries org_id and org_roles,
    // which no hook may set (hooks/call.ts).
    extraTokenClaims: async (ctx: KoaLike, token: MintedToken) => {
      const kept = token.extra
      if (token.kind !== 'AccessToken' && token.kind !== 'ClientCredentials') return kept
      const organization =
        token.kind === 'AccessToken' ? await organizationOf(ctx as never) : undefined
      const actor: Actor = {
        type: token.accountId ? 'user' : 'anonymous',
        id: token.accountId ?? null,
        ip: ctx?.ip || null,
        userAgent: ctx?.get?.('user-agent') || null,
      }
      try {
        const claims = {
          ...(await deps.hookClaims(tenant, token.accountId, token.clientId, actor)),
          ...kept,
          ...(organization && { org_id: organization.orgId, org_roles: organization.orgRoles }),
        }
        return Object.keys(claims).length > 0 ? claims : undefined
      } catch (error) {
        if (error instanceof AppError && error.reason === 'hook_denied') {
          throw new errors.InvalidGrant('the workspace refused to issue this token')
        }
        throw error
      }
    },
    loadExistingGrant: loadExistingGrant(deps, tenant.id, tenant.slug),
    // The policies read which kind of application asks (clients.ts).
    extraClientMetadata: {
      properties: ['app_type', 'first_party', 'allowed_scopes', 'app_profile'],
    },
    // CONTRACT §11: first-party applications get `offline_access` without prompt=consent.
    // oidc-provider drops the scope from a request without prompt=consent (OIDC Core §11)
    // before any hook; this check, run after that, puts it back for a first-party client.
    // organization_id: CONTRACT §18 (organizations.ts).
    extraParams: {
      [FIRST_PARTY_OFFLINE]: firstPartyOffline,
      [ORGANIZATION_ID]: organizationParameter,
    },
    // oidc-provider's default (a code or token without offline_access ends with the
    // session); the one hook it calls on a code about to be saved also keeps the code's
    // organization (organizations.ts).
    expiresWithSession: async (ctx: never, code: { kind?: string; scopes: Set<string> }) => {
      carryOrganization(ctx, code)
      return !code.scopes.has('offline_access')
    },
    // RFC 7636 with S256 only (oidc-provider offers no `plain`); required for public clients
    // (spa, native), as RFC 9700 §2.1.1 asks at the least.
    // FAPI 2.0 §5.3.2.2 item 5 asks it of every fapi2 application (CONTRACT §22).
    pkce: {
      required: (_ctx: unknown, client: AuthorizationClient & { clientAuthMethod: string }) =>
        client.clientAuthMethod === 'none' || client.metadata().app_profile === 'fapi2',
    },
    // The SPEC's refresh-token family rule: rotated on every use; a reused one revokes the grant.
    rotateRefreshToken: true,
    ttl: {
      AccessToken: resourceTtl,
      ClientCredentials: resourceTtl,
      AuthorizationCode: 60,
      DeviceCode: 600,
      IdToken: 3600,
      Interaction: 600,
      Grant: 30 * DAY,
      RefreshToken: 30 * DAY,
      Session: 14 * DAY,
    },
    // The hosted pages lead the sign-in and consent (src/web/pages/authorize.ts).
    interactions: {
      policy: interactionsPolicy(deps, tenant),
      url: (_ctx: unknown, interaction: { uid: string }) =>
        `${config.publicUrl}/t/${tenant.slug}/authorize/${interaction.uid}`,
    },
    // Discovery lists exactly what works (OIDC Discovery §3, RFC 8414 §2): every
    // application is registered for `code` alone (clients.ts, registration.ts), so no
    // implicit or hybrid response type and no `none`; a confidential client sends its
    // secret by HTTP Basic or in the body (registration accepts both) or signs a JWT with a
    // key of its jwks (private_key_jwt, RFC 7523; CONTRACT §22), a public one none. No
    // client_secret_jwt: no application is registered for it.
    responseTypes: ['code'],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    // Every feature by name: on where a rule of CONTRACT §11 or §22 asks for it (and a test
    // covers it), off otherwise, whatever oidc-provider's default.
    features: {
      devInteractions: { enabled: false },
      // RFC 9126 (CONTRACT §22): open to every application, required of those with
      // requirePushedAuthorizationRequests (clients.ts); only registered redirect URIs.
      pushedAuthorizationRequests: {
        enabled: true,
        requirePushedAuthorizationRequests: false,
        allowUnregisteredRedirectUris: false,
      },
      // RFC 9449 (CONTRACT §22): a proof binds the tokens; required of applications with
      // requireDpop (dpop_bound_access_tokens, clients.ts). Nonces (§8) are issued and
      // checked when sent, not required: the proof's jti is single use (replay.ts) and iat
      // within the provider's window either way.
      dPoP: {
        enabled: true,
        nonceSecret: dpopNonceSecret(config),
        requireNonce: () => false,
        allowReplay: false,
      },
      // FAPI 2.0 Security Profile for applications with profile fapi2 (CONTRACT §22); the
      // rest of what it asks (PAR, DPoP, private_key_jwt, PKCE) is their metadata.
      fapi: {
        enabled: true,
        profile: (_ctx: unknown, client?: AuthorizationClient) =>
          client?.metadata().app_profile === 'fapi2' ? '2.0' : undefined,
      },
      ciba: { enabled: false },
      mTLS: { enabled: false },
      attestClientAuth: { enabled: false },
      clientIdMetadataDocument: { enabled: false },
      claimsParameter: { enabled: false },
      encryption: { enabled: false },
      jwtIntrospection: { enabled: false },
      jwtResponseModes: { enabled: false },
      jwtUserinfo: { enabled: false },
      registrationManagement: { enabled: false },
      richAuthorizationRequests: { enabled: false },
      requestObjects: { enabled: false },
      rpMetadataChoices: { enabled: false },
      // The userinfo endpoint (CONTRACT §11, Claims by scope).
      userinfo: { enabled: true },
      clientCredentials: { enabled: true },
      // RFC 7662 §2.1: a confidential client of the tenant (an API checking the tokens it
      // receives) may introspect any token of this issuer; a public client only its own.
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx: unknown, caller: Caller, token: { clientId: string }) =>
          caller.clientAuthMethod !== 'none' || caller.clientId === token.clientId,
      },
      // RFC 7009 §2.1: only the client a token was issued to may revoke it.
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx: unknown, caller: Caller, token: { clientId: string }) =>
          caller.clientId === token.clientId,
      },
      // RFC 8628 for native apps (clients.ts), its pages among the hosted pages.
      deviceFlow: { enabled: true, ...deps.pages.device(tenant) },
      // The confirmation and signed-out pages; ending the hosted session: oidc-logout.ts.
      rpInitiatedLogout: { enabled: true, ...deps.pages.logout(tenant) },
      backchannelLogout: { enabled: true },
      // RFC 7591, open per request while the tenant's `dynamicClientRegistration` is on
      // (registration.ts, whose gate is installed below).
      registration: registrationFeature(),
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: resourceServerInfo(
          deps.db,
          tenant.id,
          errors as ProviderErrors,
          organizationOf,
        ),
      },
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      userinfoSigningAlgValues: ['RS256', 'ES256'],
      introspectionSigningAlgValues: ['RS256', 'ES256'],
      authorizationSigningAlgValues: ['RS256', 'ES256'],
      // private_key_jwt's algorithms (RFC 7523); no HS256: no client_secret_jwt is offered.
      clientAuthSigningAlgValues: ['RS256', 'PS256', 'ES256', 'Ed25519', 'EdDSA'],
    },
    // CONTRACT §11, Errors: an HTML page with the status, never a redirect; the public
    // description only (the detail is oidc-provider's to log).
    // Its error page in the hosted pages' look, the status unchanged, never a redirect.
    renderError: deps.pages.error(tenant),
  })
  // The provider session keeps the service session it was signed in from
  // (hostedSessionCheck); oidc-provider stores only the Session fields it lists.
  const session = (provider as unknown as { Session: { IN_PAYLOAD: string[] } }).Session
  const fields = session.IN_PAYLOAD
  Object.defineProperty(session, 'IN_PAYLOAD', { value: [...fields, SERVICE_SESSION] })
  // A code keeps the organization it was authorized for (organizations.ts).
  const code = (provider as unknown as { AuthorizationCode: { IN_PAYLOAD: string[] } })
    .AuthorizationCode
  Object.defineProperty(code, 'IN_PAYLOAD', { value: [...code.IN_PAYLOAD, 'organizationId'] })
  acceptOrganizationAtRefresh(provider as never, deps, tenant.id)
  atomicReplayDetection(provider, deps.db, tenant.id)
  registerTokenExchange(provider, deps, tenant.id)
  provider.use(registrationGate)
  // Each request's own memo of the grant and session read with its code or token (queries.ts).
  provider.use(requestMemo)
  // CONTRACT §11, Tokens: every ID token carries `sid`; oidc-provider adds it only for a
  // client with a back-channel logout URI (and on a `claims` request naming it).
  const { Client } = provider as unknown as { Client: { prototype: object } }
  Object.defineProperty(Client.prototype, 'includeSid', { value: () => true })
  // Every request reaches the Provider with X-Forwarded-Host, -Proto and -For set by the
  // service itself from PUBLIC_URL and the client address it decided (pool.ts,
  // asPublicRequest), never as a client sent them.
  provider.proxy = true
  return provider
}
