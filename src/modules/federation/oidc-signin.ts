// Signing in through an OIDC SSO connection (CONTRACT §12), with openid-client: discovery
// from the connection's issuer, the authorization request (code flow, PKCE S256, state and
// nonce, as §7), and the callback at `{PUBLIC_URL}/v1/{slug}/sso/{id}/oidc/callback`, which
// spends the state, exchanges the code (the ID token checked: signature, iss, aud, nonce,
// exp) and hands the identity to finishSsoSignIn. Every request to the IdP goes through the
// egress rule of §13 (lib/egress.ts): a time limit, a size limit, no internal addresses
// unless WEBHOOK_ALLOW_PRIVATE=true, no redirects followed.
import type * as Client from 'openid-client'
import type { Deps } from '../../deps.ts'
import { egressFetch } from '../../lib/egress.ts'
import { claimsVerified } from '../../lib/email.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { SsoConnection } from './queries.ts'
import { openSsoSecret } from './secret.ts'
import { DEFAULT_OIDC_SCOPES, oidcRedirectUri } from './service.ts'
import type { SsoAssertion } from './sso-signin.ts'
import * as states from './states.ts'

const TIMEOUT_MS = 10_000
/** Discovery documents, key sets and token answers are small: 512 KiB is plenty. */
const MAX_BYTES = 512 * 1024
/** Clients kept per process (one per connection version), and for how long. */
const CACHE_SIZE = 256
const CACHE_TTL_MS = 60 * 60 * 1000

const openid = () => import('openid-client')

type OidcDeps = Pick<Deps, 'cipher' | 'clock' | 'config' | 'db'>

/** The PKCE verifier is sealed at rest, bound to its tenant and connection. */
const verifierAad = (tenantId: string, connectionId: string) =>
  `sso-oidc-state:${tenantId}:${connectionId}`

/** A connection as the client cache keys it: an edit (`updatedAt`) is a new client. */
export interface Versioned {
  tenantId: string
  id: string
  updatedAt: Date
}

/**
 * One openid-client Configuration per connection (keyed by its id and last change, so an
 * edit is a new client), at most CACHE_SIZE, oldest evicted, each rebuilt after an hour or
 * after a failure that was not the IdP's own refusal (so an outage is not remembered). For
 * SSO connections and social connections alike (social/signin.ts).
 */
export class ClientCache<C extends Versioned> {
  private readonly entries = new Map<
    string,
    { client: Promise<Client.Configuration>; at: number }
  >()
  private readonly build: (connection: C) => Promise<Client.Configuration>

  constructor(build: (connection: C) => Promise<Client.Configuration>) {
    this.build = build
  }

  get(connection: C): Promise<Client.Configuration> {
    const key = `${connection.tenantId}:${connection.id}:${connection.updatedAt.getTime()}`
    const now = Date.now()
    const known = this.entries.get(key)
    if (known && now - known.at < CACHE_TTL_MS) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key)
      this.entries.set(key, known)
      return known.client
    }
    const client = this.build(connection)
    this.entries.set(key, { client, at: now })
    client.catch(() => this.entries.delete(key))
    while (this.entries.size > CACHE_SIZE) {
      const oldest = this.entries.keys().next().value
      if (oldest === undefined) break
      this.entries.delete(oldest)
    }
    return client
  }

  forget(connection: C, error: unknown, lib: typeof Client): void {
    if (error instanceof lib.ResponseBodyError || error instanceof lib.AuthorizationResponseError) {
      return
    }
    for (const key of this.entries.keys()) {
      if (key.startsWith(`${connection.tenantId}:${connection.id}:`)) this.entries.delete(key)
    }
  }
}

/** The egress rule of §13 as openid-client's fetch: time and size limits, no internal hosts. */
export function egressClientFetch(deps: Pick<Deps, 'config'>): Client.CustomFetch {
  return egressFetch({
    allowPrivate: deps.config.webhookAllowPrivate,
    timeoutMs: TIMEOUT_MS,
    maxBytes: MAX_BYTES,
  }) as unknown as Client.CustomFetch
}

/**
 * An OpenID provider's client found by discovery from `issuer`, through the egress rule,
 * with its ID tokens' signatures checked too (they come straight from the token endpoint).
 */
export async function discoverClient(
  deps: Pick<Deps, 'config'>,
  issuer: string,
  clientId: string,
  clientAuth: (server: Client.ServerMetadata) => Client.ClientAuth,
): Promise<Client.Configuration> {
  const client = await openid()
  const fetch = egressClientFetch(deps)
  const insecure = new URL(issuer).protocol === 'http:'
  const execute = insecure && deps.config.webhookAllowPrivate ? [client.allowInsecureRequests] : []
  // Discovered first without a client, so the client's authentication can follow what the
  // provider supports.
  const found = await client.discovery(new URL(issuer), clientId, undefined, undefined, {
    timeout: TIMEOUT_MS / 1000,
    // http only where the egress rule allows internal addresses (development, tests).
    execute,
    [client.customFetch]: fetch,
  })
  const server = found.serverMetadata()
  const configuration = new client.Configuration(server, clientId, undefined, clientAuth(server))
  for (const step of execute) step(configuration)
  configuration[client.customFetch] = fetch
  configuration.timeout = TIMEOUT_MS / 1000
  client.enableNonRepudiationChecks(configuration)
  return configuration
}

async function buildSsoClient(
  deps: OidcDeps,
  connection: SsoConnection,
): Promise<Client.Configuration> {
  const client = await openid()
  const secret = connection.oidcClientSecretEnc
    ? openSsoSecret(deps.cipher, connection.tenantId, connection.id, connection.oidcClientSecretEnc)
    : undefined
  if (!connection.oidcIssuer || !connection.oidcClientId || secret === undefined) {
    throw new Error('the connection has no usable OIDC client')
  }
  return discoverClient(deps, connection.oidcIssuer, connection.oidcClientId, () =>
    client.ClientSecretBasic(secret),
  )
}

const clientsByDeps = new WeakMap<object, ClientCache<SsoConnection>>()

/** The one client cache of an app's dependencies. */
export function oidcClientsOf(deps: OidcDeps): ClientCache<SsoConnection> {
  let clients = clientsByDeps.get(deps.db)
  if (!clients) {
    clients = new ClientCache((connection) => buildSsoClient(deps, connection))
    clientsByDeps.set(deps.db, clients)
  }
  return clients
}

export class OidcUnavailable extends Error {}

/**
 * The URL to send the browser to, with a single-use state (hashed at rest, its PKCE
 * verifier sealed) bound to the tenant and the connection; answers the state too, for the
 * browser binding. Throws OidcUnavailable when the IdP cannot be reached.
 */
export async function startOidcSignIn(
  deps: OidcDeps,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  connection: SsoConnection,
): Promise<{ url: string; state: string }> {
  const client = await openid()
  const clients = oidcClientsOf(deps)
  let configuration: Client.Configuration
  try {
    configuration = await clients.get(connection)
  } catch (error) {
    clients.forget(connection, error, client)
    throw new OidcUnavailable(String((error as Error)?.message ?? error))
  }
  const { state, nonce, codeChallenge } = await states.beginAuthorization(
    deps,
    tenant.id,
    connection.id,
    verifierAad(tenant.id, connection.id),
  )
  const url = client.buildAuthorizationUrl(configuration, {
    response_type: 'code',
    redirect_uri: oidcRedirectUri(deps, tenant.slug, connection.id),
    scope: (connection.oidcScopes ?? DEFAULT_OIDC_SCOPES).join(' '),
    state,
    nonce,
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
  })
  return { url: url.href, state }
}

/**
 * Why a callback (an SSO connection's or a social connection's) did not produce an
 * identity: `reason` for the audit row and the page.
 */
export class CallbackRefused extends Error {
  readonly reason: string
  readonly status: number
  constructor(reason: string, status: number, detail?: string) {
    super(detail ?? reason)
    this.reason = reason
    this.status = status
  }
}

/**
 * A callback's answer, its state spent: the provider's `error` (the state spent all the
 * same: 401 idp_error), no state or code, or no live state of this tenant and connection (400
 * invalid_state); else the code with the state's PKCE verifier and nonce.
 */
export async function spendCallback(
  deps: Pick<Deps, 'cipher' | 'clock' | 'db'>,
  tenantId: string,
  connectionId: string,
  aad: string,
  query: Record<string, string | undefined>,
) {
  const spend = (state: string) =>
    states.spendAuthorization(deps, tenantId, connectionId, aad, state)
  if (query.error) {
    if (query.state) await spend(query.state)
    throw new CallbackRefused('idp_error', 401, query.error)
  }
  const { state, code, iss } = query
  if (!state || !code) throw new CallbackRefused('invalid_state', 400)
  const request = await spend(state)
  if (!request) throw new CallbackRefused('invalid_state', 400)
  return { ...request, answer: { code, state, iss } }
}

/**
 * The callback's identity: the state spent (unknown, used, expired, another tenant's or
 * another connection's: 400 invalid_state), the IdP's `error` (401 idp_error), the code
 * exchanged and the ID token checked (401 idp_exchange_failed otherwise).
 */
export async function finishOidcSignIn(
  deps: OidcDeps,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  connection: SsoConnection,
  query: Record<string, string | undefined>,
): Promise<SsoAssertion> {
  const aad = verifierAad(tenant.id, connection.id)
  const request = await spendCallback(deps, tenant.id, connection.id, aad, query)
  const client = await openid()
  const clients = oidcClientsOf(deps)
  try {
    const configuration = await clients.get(connection)
    const current = states.callbackUrl(
      oidcRedirectUri(deps, tenant.slug, connection.id),
      request.answer,
      true,
    )
    const tokens = await client.authorizationCodeGrant(configuration, current, {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: request.answer.state,
      expectedNonce: request.nonce,
      idTokenExpected: true,
    })
    const claims = tokens.claims()
    if (!claims) throw new Error('no ID token')
    let source: Record<string, unknown> = claims
    // Some IdPs keep the email at userinfo; its `sub` must match the ID token's.
    if (typeof claims.email !== 'string' && configuration.serverMetadata().userinfo_endpoint) {
      source = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub)
    }
    const amr = Array.isArray(claims.amr) ? claims.amr.filter((m) => typeof m === 'string') : []
    return {
      subject: claims.sub,
      // An address the IdP itself says is unverified proves nothing (anyone could have typed
      // it there): the sign-in goes on as if it had none, and is refused as not provisioned.
      // An IdP that sends no email_verified (Entra ID) is trusted for its domains; one that
      // sends it must say true (or "true"): "false" as a string is unverified too (P4).
      email:
        typeof source.email === 'string' &&
        (source.email_verified === undefined || claimsVerified(source.email_verified))
          ? source.email
          : null,
      mfa: amr.includes('mfa') || new Set(amr).size >= 2,
      // The roleMapping reads the ID token's claims, and userinfo's where it was read.
      claims: source === claims ? { ...claims } : { ...source, ...claims },
    }
  } catch (error) {
    clients.forget(connection, error, client)
    throw new CallbackRefused(
      'idp_exchange_failed',
      401,
      String((error as Error)?.message ?? error),
    )
  }
}
