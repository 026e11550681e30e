// The external identity provider (CONTRACT §1, §7), through openid-client.
//
// With IDP_ISSUER the provider is found by OpenID Connect Discovery 1.0
// (`$IDP_ISSUER/.well-known/openid-configuration`). The metadata is shared by every
// tenant, cached for an hour, and fetched again after any failure that is not the
// provider's own refusal (unreachable, moved endpoints, rotated issuer), so an outage is
// not remembered. Without it, IDP_AUTHORIZATION_URL, IDP_TOKEN_URL and IDP_USERINFO_URL
// describe a plain OAuth 2.0 provider: no ID token is used, the identity comes from the
// userinfo endpoint, and its issuer key is the origin of the authorization URL.
import * as client from 'openid-client'
import type { IdpConfig } from '../../../config.ts'
import { withoutIdToken } from '../plain-oauth.ts'

export interface ClientCredentials {
  clientId: string
  clientSecret: string
}

const METADATA_TTL_MS = 60 * 60 * 1000
const TIMEOUT_SECONDS = 10

export class IdentityProvider {
  private readonly config: IdpConfig
  /** OpenID Connect (ID tokens checked) or plain OAuth 2.0 (userinfo only). */
  readonly oidc: boolean
  private metadata: Promise<client.ServerMetadata> | undefined
  private fetchedAt = 0
  /** The provider's keys, shared by every tenant's client configuration. */
  private jwks: client.ExportedJWKSCache | undefined

  constructor(config: IdpConfig) {
    this.config = config
    this.oidc = config.issuer !== undefined
  }

  /** A client of the provider with one tenant's credentials. */
  async client(credentials: ClientCredentials): Promise<client.Configuration> {
    const server = await this.serverMetadata()
    const config = new client.Configuration(
      server,
      credentials.clientId,
      { client_secret: credentials.clientSecret },
      authMethod(server, credentials.clientSecret),
    )
    config.timeout = TIMEOUT_SECONDS
    if (isLoopbackHttp(server.issuer)) client.allowInsecureRequests(config)
    if (this.oidc) {
      // ID tokens come straight from the token endpoint, where openid-client would rely
      // on TLS alone; their signatures are checked too (CONTRACT §7: signature, iss, aud,
      // nonce, exp), so a token signed by another key or with `alg: none` is refused.
      client.enableNonRepudiationChecks(config)
      if (this.jwks) client.setJwksCache(config, this.jwks)
    } else {
      config[client.customFetch] = withoutIdToken(
        fetch as unknown as client.CustomFetch,
        server.token_endpoint,
      )
    }
    return config
  }

  /** Keeps the keys a configuration fetched, for the next one. */
  keep(config: client.Configuration): void {
    if (this.oidc) this.jwks = client.getJwksCache(config) ?? this.jwks
  }

  /** Forgets the metadata after a failure, so the next request discovers again. */
  forget(error: unknown): void {
    if (error instanceof client.ResponseBodyError) return
    if (error instanceof client.AuthorizationResponseError) return
    this.metadata = undefined
    this.jwks = undefined
  }

  private serverMetadata(): Promise<client.ServerMetadata> {
    if (this.metadata && Date.now() - this.fetchedAt < METADATA_TTL_MS) return this.metadata
    this.fetchedAt = Date.now()
    const pending = this.oidc ? this.discover() : Promise.resolve(this.explicit())
    this.metadata = pending
    pending.catch(() => {
      if (this.metadata === pending) this.metadata = undefined
    })
    return pending
  }

  private async discover(): Promise<client.ServerMetadata> {
    const issuer = new URL(this.config.issuer as string)
    const found = await client.discovery(issuer, 'discovery', undefined, undefined, {
      timeout: TIMEOUT_SECONDS,
      execute: isLoopbackHttp(issuer.href) ? [client.allowInsecureRequests] : [],
    })
    return found.serverMetadata()
  }

  private explicit(): client.ServerMetadata {
    const { authorizationUrl, tokenUrl, userinfoUrl } = this.config
    return {
      issuer: new URL(authorizationUrl as string).origin,
      authorization_endpoint: authorizationUrl,
      token_endpoint: tokenUrl,
      userinfo_endpoint: userinfoUrl,
    }
  }
}

/**
 * client_secret_basic, which RFC 6749 §2.3.1 makes every provider support, unless the
 * provider lists only client_secret_post.
 */
function authMethod(server: client.ServerMetadata, secret: string): client.ClientAuth {
  const supported = server.token_endpoint_auth_methods_supported
  if (supported && !supported.includes('client_secret_basic')) {
    if (supported.includes('client_secret_post')) return client.ClientSecretPost(secret)
  }
  return client.ClientSecretBasic(secret)
}

/**
 * Plain http is accepted only on loopback (development and tests); anywhere else
 * openid-client refuses it.
 */
function isLoopbackHttp(url: string): boolean {
  const { protocol, hostname } = new URL(url)
  return (
    protocol === 'http:' &&
    (hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname))
  )
}
