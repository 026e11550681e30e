// The tenant's applications as oidc-provider clients (CONTRACT §11). The provider asks
// its adapter for model `Client` on every request that names a client; the answer is read
// from the applications table of that tenant only (another tenant's client_id is unknown
// here: invalid_client), with the secret opened from its sealed column, so a rotated
// secret or a deleted application takes effect on the next request, on every instance.
import type { Handle } from '../../db/client.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { authMethodOf } from '../applications/client-auth.ts'
import { type Application, findApplicationByClientId } from '../applications/clients.ts'
import { openSecret } from '../applications/secret.ts'

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'
/** RFC 8693 §2.1. */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'

/** What each type may do (RFC 9700 §2.1.1: PKCE for every code flow; public clients have no secret). */
export const GRANTS: Record<string, string[]> = {
  web: ['authorization_code', 'refresh_token'],
  spa: ['authorization_code', 'refresh_token'],
  native: ['authorization_code', 'refresh_token', DEVICE_CODE],
  machine: ['client_credentials'],
}

export function clientMetadata(
  app: Application,
  cipher: FieldCipher,
): Record<string, unknown> | undefined {
  // CONTRACT §22: a saml application is the SAML IdP's (modules/samlidp), never a client.
  if (app.type === 'saml') return undefined
  const secret = app.clientSecretEnc
    ? openSecret(cipher, app.tenantId, app.id, app.clientSecretEnc)
    : undefined
  // A secret sealed under a retired key cannot be compared: the client cannot sign in.
  if (app.clientSecretEnc && secret === undefined) return undefined
  const machine = app.type === 'machine'
  const method = authMethodOf(app)
  const grants = GRANTS[app.type] ?? []
  return {
    client_id: app.clientId,
    client_name: app.name,
    application_type: app.type === 'native' ? 'native' : 'web',
    grant_types: app.tokenExchange && method !== 'none' ? [...grants, TOKEN_EXCHANGE] : grants,
    response_types: machine ? [] : ['code'],
    redirect_uris: app.redirectUris,
    post_logout_redirect_uris: app.postLogoutRedirectUris,
    ...(app.backchannelLogoutUri
      ? {
          backchannel_logout_uri: app.backchannelLogoutUri,
          backchannel_logout_session_required: true,
        }
      : {}),
    // CONTRACT §22, client authentication. A web or machine app keeps its secret under
    // private_key_jwt too; the provider then accepts only the signed assertion.
    ...(secret ? { client_secret: secret } : {}),
    token_endpoint_auth_method: method,
    ...(method === 'private_key_jwt'
      ? app.jwksUri
        ? { jwks_uri: app.jwksUri }
        : { jwks: app.jwks ?? { keys: [] } }
      : {}),
    // RFC 9126 §6 and RFC 9449 §5.2, per application.
    require_pushed_authorization_requests: app.requirePar,
    dpop_bound_access_tokens: app.requireDpop,
    // Extra metadata (provider.ts declares it) read by the provider's policies.
    app_type: app.type,
    // CONTRACT §11, Consent: every dynamically registered client is third-party.
    first_party: app.firstParty && !app.dynamic,
    allowed_scopes: app.allowedScopes,
    app_profile: app.profile,
  }
}

export async function findClient(db: Handle, cipher: FieldCipher, tenantId: string, id: string) {
  const app = await findApplicationByClientId(db, tenantId, id)
  return app ? clientMetadata(app, cipher) : undefined
}
