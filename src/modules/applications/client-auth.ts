// CONTRACT §22's per-application settings: how the client authenticates (RFC 6749 §2.3,
// RFC 7523), its keys for private_key_jwt, pushed authorization requests (RFC 9126), DPoP
// (RFC 9449), token exchange (RFC 8693) and the FAPI 2.0 profile. One function merges what
// a request asks with what the application has and refuses, with every issue at once, a
// combination the provider could not honour; the provider reads the result (oidc/clients.ts).
import { createPublicKey, type JsonWebKey } from 'node:crypto'
import { AppError } from '../../lib/errors.ts'
import { type BackchannelOptions, backchannelUriProblem } from './redirect-uris.ts'
import type { ApplicationType, TokenEndpointAuthMethod } from './schemas.ts'
import { hasSecret } from './secret.ts'

export type Jwks = { keys: ({ kty: string } & Record<string, unknown>)[] }

/** The columns of an applications row these settings are kept in. */
export interface ClientAuthColumns {
  tokenEndpointAuthMethod: string | null
  jwks: Jwks | null
  jwksUri: string | null
  requirePar: boolean
  requireDpop: boolean
  tokenExchange: boolean
  profile: string | null
}

/** What a create or patch body may say about them (applications/schemas.ts). */
export interface ClientAuthInput {
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod
  jwks?: Jwks | null
  jwksUri?: string | null
  requirePushedAuthorizationRequests?: boolean
  requireDpop?: boolean
  tokenExchange?: boolean
  profile?: 'fapi2' | null
}

export const CLIENT_AUTH_INPUT_KEYS = [
  'tokenEndpointAuthMethod',
  'jwks',
  'jwksUri',
  'requirePushedAuthorizationRequests',
  'requireDpop',
  'tokenExchange',
  'profile',
] as const

/** Before CONTRACT §22 a row kept no method: a secret by HTTP Basic, or none for a public client. */
export function authMethodOf(row: {
  type: string
  tokenEndpointAuthMethod: string | null
}): TokenEndpointAuthMethod {
  const method = row.tokenEndpointAuthMethod
  if (method) return method as TokenEndpointAuthMethod
  return hasSecret(row.type) ? 'client_secret_basic' : 'none'
}

export const NO_CLIENT_AUTH: ClientAuthColumns = {
  tokenEndpointAuthMethod: null,
  jwks: null,
  jwksUri: null,
  requirePar: false,
  requireDpop: false,
  tokenExchange: false,
  profile: null,
}

/** RFC 7517 §6.2.2, §6.3.2, §6.4.1 and RFC 8037 §2: members only a private (or secret) key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

export function jwksProblems(jwks: Jwks, at = 'body.jwks'): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = []
  jwks.keys.forEach((key, i) => {
    const path = `${at}.keys.${i}`
    if (!['RSA', 'EC', 'OKP'].includes(String(key.kty))) {
      issues.push({ path, message: 'kty must be RSA, EC or OKP (a public key)' })
      return
    }
    if (PRIVATE_MEMBERS.some((member) => member in key)) {
      issues.push({ path, message: 'a private key: only the public key may be registered' })
      return
    }
    try {
      createPublicKey({ key: key as JsonWebKey, format: 'jwk' })
    } catch {
      issues.push({ path, message: 'not a valid public JWK' })
    }
  })
  return issues
}

/**
 * The settings an application of `type` ends up with when `input` is applied to `current`
 * (creation: NO_CLIENT_AUTH), or 400 validation naming each problem:
 * - a public client (spa, native) authenticates with `none`, a confidential one never does;
 * - private_key_jwt needs exactly one of jwks and jwksUri, and other methods neither (a
 *   switch away from private_key_jwt clears them);
 * - token exchange is for confidential applications (RFC 8693 §2.1 authenticates the client);
 * - profile fapi2 (a web app) implies PAR and DPoP and needs private_key_jwt.
 */
export function resolveClientAuth(
  type: ApplicationType,
  current: ClientAuthColumns,
  input: ClientAuthInput,
  options: BackchannelOptions,
): ClientAuthColumns {
  const issues: { path: string; message: string }[] = []
  const method = input.tokenEndpointAuthMethod ?? authMethodOf({ type, ...current })
  const confidential = hasSecret(type)
  if (confidential && method === 'none') {
    issues.push({
      path: 'body.tokenEndpointAuthMethod',
      message: `a ${type} app is a confidential client: client_secret_basic, client_secret_post or private_key_jwt`,
    })
  }
  if (!confidential && method !== 'none') {
    issues.push({
      path: 'body.tokenEndpointAuthMethod',
      message: `a ${type} app is a public client: none`,
    })
  }
  const keyed = method === 'private_key_jwt'
  let jwks = input.jwks !== undefined ? input.jwks : current.jwks
  let jwksUri = input.jwksUri !== undefined ? input.jwksUri : current.jwksUri
  if (keyed) {
    if (jwks && jwksUri) {
      issues.push({ path: 'body.jwks', message: 'give jwks or jwksUri, not both' })
    } else if (!jwks && !jwksUri) {
      issues.push({ path: 'body.jwks', message: 'private_key_jwt needs jwks or jwksUri' })
    }
    if (jwks) issues.push(...jwksProblems(jwks))
    if (jwksUri) {
      const problem = backchannelUriProblem(jwksUri, options)
      if (problem) issues.push({ path: 'body.jwksUri', message: problem })
    }
  } else {
    for (const field of ['jwks', 'jwksUri'] as const) {
      if (input[field]) {
        issues.push({ path: `body.${field}`, message: 'only for private_key_jwt' })
      }
    }
    jwks = null
    jwksUri = null
  }
  const tokenExchange = input.tokenExchange ?? current.tokenExchange
  if (tokenExchange && !confidential) {
    issues.push({ path: 'body.tokenExchange', message: 'only for web and machine apps' })
  }
  const profile = input.profile !== undefined ? input.profile : current.profile
  let requirePar = input.requirePushedAuthorizationRequests ?? current.requirePar
  let requireDpop = input.requireDpop ?? current.requireDpop
  if (requirePar && type === 'machine') {
    issues.push({
      path: 'body.requirePushedAuthorizationRequests',
      message: 'a machine app makes no authorization request',
    })
  }
  if (profile === 'fapi2') {
    if (type !== 'web') issues.push({ path: 'body.profile', message: 'fapi2 is for web apps' })
    if (!keyed) {
      issues.push({
        path: 'body.tokenEndpointAuthMethod',
        message: 'profile fapi2 requires private_key_jwt',
      })
    }
    if (input.requirePushedAuthorizationRequests === false) {
      issues.push({
        path: 'body.requirePushedAuthorizationRequests',
        message: 'profile fapi2 requires pushed authorization requests',
      })
    }
    if (input.requireDpop === false) {
      issues.push({ path: 'body.requireDpop', message: 'profile fapi2 requires DPoP' })
    }
    requirePar = true
    requireDpop = true
  }
  if (issues.length > 0) throw new AppError('validation', { details: { issues } })
  return {
    tokenEndpointAuthMethod: method,
    jwks: jwks ?? null,
    jwksUri: jwksUri ?? null,
    requirePar,
    requireDpop,
    tokenExchange,
    profile: profile ?? null,
  }
}

/** The record's view of them (applications/schemas.ts, Application). */
export function presentClientAuth(row: ClientAuthColumns & { type: string }) {
  return {
    tokenEndpointAuthMethod: authMethodOf(row),
    jwks: row.jwks,
    jwksUri: row.jwksUri,
    requirePushedAuthorizationRequests: row.requirePar,
    requireDpop: row.requireDpop,
    tokenExchange: row.tokenExchange,
    profile: row.profile === 'fapi2' ? ('fapi2' as const) : null,
  }
}
