// Hosted sign-in through the external identity provider (SPEC, Identity-provider OAuth;
// CONTRACT §7): a tenant's client credentials, the authorization request (RFC 6749 §4.1
// with PKCE S256, RFC 7636, and an OpenID nonce), and the callback that spends the state,
// exchanges the code and signs the user in.
import type * as Client from 'openid-client'
import { tenants } from '../../../db/schema.ts'
import { sealedColumn } from '../../../db/sealed-column.ts'
import type { Deps } from '../../../deps.ts'
import { AppError, fail } from '../../../lib/errors.ts'
import type { Actor } from '../../audit/recorder.ts'
import type { TokenEnvelope } from '../../sessions/service.ts'
import {
  findCredentials,
  removeCredentials,
  storeCredentials,
  type Tenant,
} from '../../tenants/tenant.ts'
import { type Identity, type PendingSecondFactor, signInWithIdentity } from '../link.ts'
import { oidcProfile, type Profile } from '../social/presets.ts'
import * as states from '../states.ts'
import type { ClientCredentials, IdentityProvider } from './provider.ts'
import type { CallbackQuery } from './schemas.ts'

export { STATE_TTL } from '../states.ts'

export interface Log {
  warn(object: object, message: string): void
}

/**
 * openid-client (and jose beneath it) is loaded by the first sign-in through the provider:
 * an instance whose tenants never use one does not hold it (issue 10, resident memory).
 */
const openid = () => import('openid-client')

/** The field key's additional data: a sealed secret cannot be moved to another tenant. */
export const secretAad = (tenantId: string) => `${tenantId}:idp`

/** tenants.idp_client_secret_enc (a tenant's row: its key is the tenant's id). */
export const idpClientSecretColumn = sealedColumn(
  tenants,
  tenants.idpClientSecretEnc,
  (row) => secretAad(row.tenantId),
  { describe: (row) => `tenant ${row.tenantId}` },
)

/** The PKCE verifier is sealed at rest too, bound to its tenant. */
export const stateAad = (tenantId: string) => `${tenantId}:oauth-state`

export function redirectUri(deps: Pick<Deps, 'config'>, tenant: Tenant): string {
  return `${deps.config.publicUrl}/v1/${tenant.slug}/oauth/idp/callback`
}

export async function saveCredentials(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'db' | 'tenants'>,
  tenant: Tenant,
  input: ClientCredentials,
  actor: Actor,
): Promise<void> {
  const sealed = deps.cipher.encrypt(input.clientSecret, secretAad(tenant.id))
  await deps.db.transaction(async (tx) => {
    const now = deps.clock.now()
    if (!(await storeCredentials(tx, tenant.id, input.clientId, sealed, now))) {
      fail('tenant_not_found')
    }
    await deps.audit.record(tx, tenant.id, actor, [
      { action: 'IdpOauthLinked', metadata: { clientId: input.clientId } },
    ])
  })
  deps.tenants.forget(tenant.slug)
}

/** Removes the credentials; removing none is not an error and records nothing. */
export async function deleteCredentials(
  deps: Pick<Deps, 'audit' | 'clock' | 'db' | 'tenants'>,
  tenant: Tenant,
  actor: Actor,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    if (await removeCredentials(tx, tenant.id, deps.clock.now())) {
      await deps.audit.record(tx, tenant.id, actor, [{ action: 'IdpOauthUnlinked' }])
    }
  })
  deps.tenants.forget(tenant.slug)
}

export async function startSignIn(
  deps: Pick<Deps, 'cipher' | 'clock' | 'config' | 'db'>,
  idp: IdentityProvider | undefined,
  tenant: Tenant,
  log: Log,
): Promise<{ authorizationUrl: string }> {
  const { provider, credentials } = await configured(deps, idp, tenant, log)
  const config = await provider.client(credentials).catch((error: unknown) => {
    provider.forget(error)
    log.warn({ err: describe(error) }, 'identity provider unavailable')
    return fail('unavailable', { message: 'The identity provider cannot be reached.' })
  })
  const client = await openid()
  // The state is kept server-side (hashed, its PKCE verifier sealed), so any instance can
  // finish the sign-in and a read of the table alone cannot redeem an intercepted code.
  const { state, nonce, codeChallenge } = await states.beginAuthorization(
    deps,
    tenant.id,
    undefined,
    stateAad(tenant.id),
  )
  const url = client.buildAuthorizationUrl(config, {
    response_type: 'code',
    redirect_uri: redirectUri(deps, tenant),
    scope: scopes(deps, provider),
    state,
    nonce,
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
  })
  return { authorizationUrl: url.href }
}

export async function finishSignIn(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'sessions'>,
  idp: IdentityProvider | undefined,
  tenant: Tenant,
  query: CallbackQuery,
  actor: Actor,
  log: Log,
  options: { deferSecondFactor?: boolean; deviceToken?: string } = {},
): Promise<TokenEnvelope | PendingSecondFactor> {
  const { provider, credentials } = await configured(deps, idp, tenant, log)
  const spend = (state: string) =>
    states.spendAuthorization(deps, tenant.id, null, stateAad(tenant.id), state)
  if (query.error) {
    // The user or the provider said no; the state, if any, is spent all the same.
    if (query.state) await spend(query.state)
    fail('idp_error', { details: { error: query.error } })
  }
  if (!query.state) fail('invalid_state')
  if (!query.code) {
    fail('validation', { details: { issues: [{ path: 'query.code', message: 'is required' }] } })
  }
  const request = await spend(query.state)
  if (!request) fail('invalid_state')

  let identity: Identity
  const config = await provider.client(credentials).catch((error: unknown) => exchangeFailed(error))
  try {
    // RFC 9207's `iss` in OpenID mode only: a plain OAuth 2.0 provider's issuer is not known.
    const current = states.callbackUrl(
      redirectUri(deps, tenant),
      { code: query.code, state: query.state, iss: query.iss },
      provider.oidc,
    )
    const tokens = await (await openid()).authorizationCodeGrant(config, current, {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: query.state,
      expectedNonce: provider.oidc ? request.nonce : undefined,
      idTokenExpected: provider.oidc,
    })
    identity = await readIdentity(provider, config, tokens)
    provider.keep(config)
  } catch (error) {
    if (error instanceof AppError) throw error
    exchangeFailed(error)
  }
  return signInWithIdentity(deps, tenant, identity, actor, options)

  function exchangeFailed(error: unknown): never {
    provider.forget(error)
    log.warn({ err: describe(error) }, 'identity provider sign-in failed')
    return fail('idp_exchange_failed')
  }
}

/** The tenant's credentials, read fresh (the tenant cache may lag another instance). */
async function configured(
  deps: Pick<Deps, 'cipher' | 'db'>,
  idp: IdentityProvider | undefined,
  tenant: Tenant,
  log: Log,
): Promise<{ provider: IdentityProvider; credentials: ClientCredentials }> {
  if (!idp) fail('idp_not_configured')
  const stored = await findCredentials(deps.db, tenant.id)
  if (!stored?.enabled || !stored.clientId || !stored.clientSecretEnc) fail('idp_not_configured')
  let clientSecret: string
  try {
    clientSecret = deps.cipher.decrypt(stored.clientSecretEnc, secretAad(tenant.id))
  } catch {
    // Sealed under a key no longer in ENCRYPTION_KEYS (retired before rotate-keys ran):
    // the admin must store the credentials again. Not a fault of the request.
    log.warn({ tenantId: tenant.id }, 'identity provider secret sealed under a retired key')
    fail('idp_not_configured', {
      message: 'The identity provider credentials can no longer be read; store them again.',
    })
  }
  return { provider: idp, credentials: { clientId: stored.clientId, clientSecret } }
}

/** The configured scopes; an OpenID provider is always asked for `openid` (ID token). */
function scopes(deps: Pick<Deps, 'config'>, idp: IdentityProvider): string {
  const list = (deps.config.idp?.scopes ?? '').split(/\s+/).filter(Boolean)
  if (idp.oidc && !list.includes('openid')) list.unshift('openid')
  return list.join(' ')
}

async function readIdentity(
  idp: IdentityProvider,
  config: Client.Configuration,
  tokens: Client.TokenEndpointResponse & Client.TokenEndpointResponseHelpers,
): Promise<Identity> {
  const client = await openid()
  const server = config.serverMetadata()
  if (idp.oidc) {
    const claims = tokens.claims()
    if (!claims) throw new Error('no ID token')
    let source: Record<string, unknown> = claims
    // Some providers keep the email at userinfo; its `sub` must match the ID token's.
    if (typeof claims.email !== 'string' && server.userinfo_endpoint) {
      source = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
    }
    return identityOf(server.issuer, oidcProfile({ ...source, sub: claims.sub }, claims.amr))
  }
  // No ID token, so no `amr`: nothing says how the user authenticated.
  const info = await client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck)
  return identityOf(server.issuer, { ...oidcProfile(info, undefined), amr: undefined })
}

/** A profile read as the social presets read theirs (social/presets.ts), as the idp's identity. */
function identityOf(issuer: string, profile: Profile): Identity {
  const { subject, email, emailVerified, amr } = profile
  return { issuer, subject, email, emailVerified, amr }
}

/** What the log may show of a provider failure: never tokens, codes or secrets. */
function describe(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) }
  const cause = error.cause instanceof Error ? error.cause.message : undefined
  return {
    type: error.name,
    code: (error as { code?: string }).code,
    message: error.message,
    cause,
  }
}

/**
 * The callbacks the hosted pages drove (web/idp.ts marks them before the handler): only
 * these defer a second factor the provider did not report to the pages' second-factor
 * step (CONTRACT §12's rule, for the SPEC's idp too); the id of the pending sign-in a
 * callback stored, for the pages' hand-off to put in the browser's cookie.
 */
const pagesDriven = new WeakSet<object>()
const pendingByRequest = new WeakMap<object, string>()
export const markPagesDriven = (request: object) => pagesDriven.add(request)
export const isPagesDriven = (request: object) => pagesDriven.has(request)
export const notePendingSecondFactor = (request: object, id: string) =>
  pendingByRequest.set(request, id)
export const pendingSecondFactorOf = (request: object) => pendingByRequest.get(request)
