// Verifying the service's access tokens in another back end (CONTRACT §4, §10) with jose:
// offline against the JWKS (ES256/EdDSA) or with the shared secret (HS256), checking
// iss, exp and tid (the tenant: a token of one tenant is no good on another's routes);
// optionally asking the service whether the session is still live (RFC 7662), since an
// offline check cannot see a logout until the token expires (15 minutes at most).
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose'
import type { FetchLike } from './client.ts'
import { AuthServiceError } from './errors.ts'

/** The claims of an access token (CONTRACT §4). */
export interface AccessTokenClaims extends JWTPayload {
  iss: string
  /** The user's id. */
  sub: string
  /** The tenant's id. */
  tid: string
  role: 'Admin' | 'Member'
  /** The session's id (one refresh-token family). */
  sid: string
  iat: number
  exp: number
  jti: string
}

export interface VerifyOptions {
  /** The service's PUBLIC_URL, the tokens' `iss`. */
  issuer: string
  /** The tenant's id (`tid`); a token of any other tenant is refused. */
  tenantId: string
  /** `{PUBLIC_URL}/.well-known/jwks.json`, with JWT_ALG ES256 or EdDSA. */
  jwksUrl?: string | URL
  /** The JWT_SECRET (its UTF-8 bytes), with JWT_ALG HS256. */
  secret?: string | Uint8Array
  /** Required `aud`, when your tokens carry one. */
  audience?: string | string[]
  /** Seconds of clock skew allowed on exp/iat (default 0). */
  clockToleranceSeconds?: number
  /** The time to check exp against (default now). */
  currentDate?: Date
  /**
   * Also ask the service (POST /v1/{tenant}/oauth/introspect, RFC 7662) so a logged-out
   * or revoked session is refused at once. `url` is that route's full URL.
   */
  introspect?: { url: string | URL; apiKey: string; fetch?: FetchLike }
}

// One JWKS per URL for the process: jose caches the keys and refetches on an unknown kid.
const keySets = new Map<string, JWTVerifyGetKey>()

function keyFor(options: VerifyOptions): {
  key: JWTVerifyGetKey | Uint8Array
  algorithms: string[]
} {
  if (options.jwksUrl !== undefined) {
    const url = String(options.jwksUrl)
    let set = keySets.get(url)
    if (!set) {
      set = createRemoteJWKSet(new URL(url))
      keySets.set(url, set)
    }
    // Only public-key algorithms with a JWKS: no HMAC with a public key (RFC 8725 §3.1).
    return { key: set, algorithms: ['ES256', 'EdDSA'] }
  }
  if (options.secret !== undefined) {
    const key =
      typeof options.secret === 'string' ? new TextEncoder().encode(options.secret) : options.secret
    return { key, algorithms: ['HS256'] }
  }
  throw new TypeError('verifyAccessToken: give jwksUrl or secret')
}

function refused(reason: string, message: string) {
  return new AuthServiceError({ status: 401, code: 'UNAUTHORIZED', message, details: { reason } })
}

/**
 * The claims of a valid access token of the tenant; otherwise throws AuthServiceError
 * 401 with reason `token_expired`, `token_invalid` or (with introspect) `session_revoked`.
 */
export async function verifyAccessToken(
  token: string,
  options: VerifyOptions,
): Promise<AccessTokenClaims> {
  const { key, algorithms } = keyFor(options)
  let payload: JWTPayload
  try {
    const verified =
      key instanceof Uint8Array
        ? await jwtVerify(token, key, verifyOptions(options, algorithms))
        : await jwtVerify(token, key, verifyOptions(options, algorithms))
    payload = verified.payload
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw refused('token_expired', 'Access token expired.')
    if (error instanceof errors.JOSEError) throw refused('token_invalid', 'Invalid access token.')
    throw error // the JWKS could not be fetched, and the like: not the token's fault
  }
  if (payload.tid !== options.tenantId || typeof payload.sid !== 'string') {
    throw refused('token_invalid', 'Invalid access token.')
  }
  if (options.introspect) await introspect(token, options.introspect)
  return payload as AccessTokenClaims
}

function verifyOptions(options: VerifyOptions, algorithms: string[]) {
  return {
    issuer: options.issuer,
    audience: options.audience,
    algorithms,
    clockTolerance: options.clockToleranceSeconds ?? 0,
    currentDate: options.currentDate,
    requiredClaims: ['sub', 'tid', 'sid', 'exp', 'iat'],
  }
}

async function introspect(token: string, options: NonNullable<VerifyOptions['introspect']>) {
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const res = await send(String(options.url), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify({ token }),
  })
  if (!res.ok) throw await AuthServiceError.fromResponse(res)
  const body = (await res.json()) as { active?: unknown }
  if (body.active !== true) throw refused('session_revoked', 'Session revoked.')
}
