// Signing in through a social connection (CONTRACT §19), with openid-client: the
// authorization request (code flow, state bound to the browser, PKCE S256, a nonce for
// OpenID Connect) and the callback at `{PUBLIC_URL}/v1/{slug}/social/{id}/callback`, which
// spends the state, exchanges the code (an ID token checked: signature, iss, aud, nonce,
// exp) and reads the profile the connection's preset describes (presets.ts; Apple's
// client secret, form POST and `user` field: apple.ts). Every request to the provider goes
// through the egress rule of §13.
import type * as Client from 'openid-client'
import type { Deps } from '../../../deps.ts'
import type { Tenant } from '../../tenants/tenant.ts'
import {
  CallbackRefused,
  ClientCache,
  discoverClient,
  egressClientFetch,
  spendCallback,
} from '../oidc-signin.ts'
import { withoutIdToken } from '../plain-oauth.ts'
import * as states from '../states.ts'
import { APPLE_AUDIENCE, AppleClientSecret, appleProfile, openAppleKey } from './apple.ts'
import { microsoftClient, microsoftProfile } from './microsoft.ts'
import {
  type ApiGet,
  type Endpoints,
  oidcProfile,
  PRESETS,
  type Preset,
  type Profile,
  ProfileError,
  type SocialProviderName,
} from './presets.ts'
import type { SocialConnection } from './queries.ts'
import { openSocialSecret } from './secret.ts'
import { scopesOf, socialCallbackUrl } from './service.ts'

const openid = () => import('openid-client')

type SocialDeps = Pick<Deps, 'cipher' | 'clock' | 'config' | 'db'>

/** The PKCE verifier is sealed at rest, bound to its tenant and connection. */
const verifierAad = (tenantId: string, connectionId: string) =>
  `social-state:${tenantId}:${connectionId}`

export const presetOf = (connection: Pick<SocialConnection, 'provider'>): Preset =>
  PRESETS[connection.provider as SocialProviderName]

/**
 * The endpoints a connection uses: SOCIAL_PROVIDER_ENDPOINTS for its preset (development and
 * tests), else the connection's own (oauth2, GitHub Enterprise), else the preset's.
 */
function endpointsOf(deps: Pick<Deps, 'config'>, connection: SocialConnection): Endpoints {
  const preset = presetOf(connection)
  const override = deps.config.socialProviderEndpoints[connection.provider]
  const own = preset.protocol === 'oauth2' ? preset.endpoints : {}
  return { ...own, ...(connection.endpoints ?? {}), ...(override ?? {}) }
}

function issuerOf(deps: Pick<Deps, 'config'>, connection: SocialConnection): string {
  const preset = presetOf(connection)
  const override = deps.config.socialProviderEndpoints[connection.provider]?.issuer
  const issuer =
    override ?? connection.issuer ?? (preset.protocol === 'oidc' ? preset.issuer : undefined)
  if (!issuer) throw new Error('the connection has no issuer')
  return issuer
}

/**
 * The client secret's authentication: client_secret_basic, which RFC 6749 §2.3.1 makes every
 * provider support, unless the provider lists only client_secret_post (or the preset says
 * its provider reads the body, as GitHub's and Facebook's do).
 */
function clientAuth(
  lib: typeof Client,
  secret: string,
  server: Client.ServerMetadata,
  post: boolean,
): Client.ClientAuth {
  const supported = server.token_endpoint_auth_methods_supported
  const postOnly =
    supported?.includes('client_secret_post') && !supported.includes('client_secret_basic')
  return post || postOnly ? lib.ClientSecretPost(secret) : lib.ClientSecretBasic(secret)
}

/** The Apple client secret each Apple client sends, renewed before each token request. */
const appleSecrets = new WeakMap<Client.Configuration, AppleClientSecret>()

/**
 * An Apple connection's client: its secret a JWT signed with the connection's key, sent in
 * the body as Apple's token endpoint reads it.
 */
async function buildAppleClient(deps: SocialDeps, connection: SocialConnection) {
  const privateKey = connection.applePrivateKeyEnc
    ? openAppleKey(deps.cipher, connection.tenantId, connection.id, connection.applePrivateKeyEnc)
    : undefined
  if (!privateKey || !connection.appleTeamId || !connection.appleKeyId) {
    throw new Error('the connection’s Apple key cannot be read')
  }
  const override = deps.config.socialProviderEndpoints.apple?.audience
  const secret = new AppleClientSecret(
    {
      teamId: connection.appleTeamId,
      keyId: connection.appleKeyId,
      clientId: connection.clientId,
      privateKey,
      audience: override ?? APPLE_AUDIENCE,
    },
    deps.clock,
  )
  const configuration = await discoverClient(
    deps,
    issuerOf(deps, connection),
    connection.clientId,
    () => (_server, client, body) => {
      body.set('client_id', client.client_id)
      body.set('client_secret', secret.current)
    },
  )
  appleSecrets.set(configuration, secret)
  return configuration
}

async function buildClient(deps: SocialDeps, connection: SocialConnection) {
  const preset = presetOf(connection)
  if (preset.protocol === 'oidc' && preset.apple) return buildAppleClient(deps, connection)
  const lib = await openid()
  const secret = connection.clientSecretEnc
    ? openSocialSecret(deps.cipher, connection.tenantId, connection.id, connection.clientSecretEnc)
    : undefined
  if (secret === undefined) throw new Error('the connection’s secret cannot be read')
  if (connection.provider === 'microsoft') {
    return microsoftClient(deps, lib, connection, (server) =>
      clientAuth(lib, secret, server, false),
    )
  }
  if (preset.protocol === 'oidc') {
    return discoverClient(deps, issuerOf(deps, connection), connection.clientId, (server) =>
      clientAuth(lib, secret, server, false),
    )
  }
  const endpoints = endpointsOf(deps, connection)
  const server: Client.ServerMetadata = {
    // A plain OAuth 2.0 provider names no issuer: its authorization origin stands for it.
    issuer: new URL(endpoints.authorizationUrl as string).origin,
    authorization_endpoint: endpoints.authorizationUrl,
    token_endpoint: endpoints.tokenUrl,
  }
  const configuration = new lib.Configuration(
    server,
    connection.clientId,
    undefined,
    clientAuth(lib, secret, server, preset.tokenAuth === 'post'),
  )
  const fetch = egressClientFetch(deps)
  configuration[lib.customFetch] = withoutIdToken(fetch, server.token_endpoint)
  if (new URL(server.issuer).protocol === 'http:' && deps.config.webhookAllowPrivate) {
    lib.allowInsecureRequests(configuration)
  }
  return configuration
}

const cachesByDeps = new WeakMap<object, ClientCache<SocialConnection>>()

function clientsOf(deps: SocialDeps): ClientCache<SocialConnection> {
  let clients = cachesByDeps.get(deps.db)
  if (!clients) {
    clients = new ClientCache((connection) => buildClient(deps, connection))
    cachesByDeps.set(deps.db, clients)
  }
  return clients
}

export class SocialUnavailable extends Error {}

/**
 * The URL to send the browser to, with a single-use state (hashed at rest, its PKCE verifier
 * sealed) bound to the tenant and the connection; answers the state too, for the browser
 * binding. Throws SocialUnavailable when the provider cannot be reached.
 */
export async function startSocialSignIn(
  deps: SocialDeps,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  connection: SocialConnection,
): Promise<{ url: string; state: string }> {
  const lib = await openid()
  const clients = clientsOf(deps)
  let configuration: Client.Configuration
  try {
    configuration = await clients.get(connection)
  } catch (error) {
    clients.forget(connection, error, lib)
    throw new SocialUnavailable(String((error as Error)?.message ?? error))
  }
  const preset = presetOf(connection)
  const oidc = preset.protocol === 'oidc'
  const apple = preset.protocol === 'oidc' && preset.apple === true
  const { state, nonce, codeChallenge } = await states.beginAuthorization(
    deps,
    tenant.id,
    connection.id,
    verifierAad(tenant.id, connection.id),
  )
  const url = lib.buildAuthorizationUrl(configuration, {
    response_type: 'code',
    redirect_uri: socialCallbackUrl(deps, tenant.slug, connection.id),
    scope: scopesOf(connection).join(' '),
    state,
    ...(oidc ? { nonce } : {}),
    // Apple sends the code back in a form POST when the name or email is asked for.
    ...(apple ? { response_mode: 'form_post' } : {}),
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
  })
  return { url: url.href, state }
}

/**
 * The callback's profile: the state spent (spendCallback's refusals), the code exchanged and
 * the profile read (401 idp_exchange_failed otherwise).
 */
export async function finishSocialSignIn(
  deps: SocialDeps,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  connection: SocialConnection,
  query: Record<string, string | undefined>,
): Promise<Profile> {
  const aad = verifierAad(tenant.id, connection.id)
  const request = await spendCallback(deps, tenant.id, connection.id, aad, query)
  const lib = await openid()
  const clients = clientsOf(deps)
  const preset = presetOf(connection)
  try {
    const configuration = await clients.get(connection)
    const current = states.callbackUrl(
      socialCallbackUrl(deps, tenant.slug, connection.id),
      request.answer,
      preset.protocol === 'oidc',
    )
    // Microsoft's ID token is set aside by its client and checked by microsoft.ts.
    const microsoft = connection.provider === 'microsoft'
    const oidc = preset.protocol === 'oidc' && !microsoft
    await appleSecrets.get(configuration)?.renew()
    const tokens = await lib.authorizationCodeGrant(configuration, current, {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: request.answer.state,
      ...(oidc ? { expectedNonce: request.nonce } : {}),
      idTokenExpected: oidc,
    })
    if (microsoft) {
      return await microsoftProfile(deps, configuration, connection, tokens, request.nonce)
    }
    if (preset.protocol === 'oauth2') {
      return await preset.profile(
        apiGet(deps, tokens.access_token),
        endpointsOf(deps, connection),
        connection.claims ?? {},
      )
    }
    const claims = tokens.claims()
    if (!claims) throw new Error('no ID token')
    let source: Record<string, unknown> = claims
    // Some providers keep the email at userinfo; its `sub` must match the ID token's.
    if (typeof claims.email !== 'string' && configuration.serverMetadata().userinfo_endpoint) {
      source = await lib.fetchUserInfo(configuration, tokens.access_token, claims.sub)
    }
    if (preset.apple) return appleProfile({ ...source, sub: claims.sub }, claims.amr, query.user)
    return oidcProfile({ ...source, sub: claims.sub }, claims.amr)
  } catch (error) {
    if (!(error instanceof ProfileError)) clients.forget(connection, error, lib)
    throw new CallbackRefused(
      'idp_exchange_failed',
      401,
      String((error as Error)?.message ?? error),
    )
  }
}

/** A GET of the provider's API with the access token, through the egress rule. */
function apiGet(deps: Pick<Deps, 'config'>, accessToken: string): ApiGet {
  const fetch = egressClientFetch(deps)
  return async (url) => {
    const response = await fetch(url, {
      method: 'GET',
      headers: {
        authorization: `Bearer ${accessToken}`,
        accept: 'application/json',
        // GitHub's REST API refuses a request without one.
        'user-agent': 'tenant-auth',
      },
    } as unknown as Parameters<Client.CustomFetch>[1])
    if (!response.ok) throw new Error(`the provider's API answered ${response.status}`)
    return response.json()
  }
}
