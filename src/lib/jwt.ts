// Access tokens (CONTRACT §4, §10): JWTs with a `kid` header so that keys can rotate.
// JWT_ALG picks one algorithm for the whole service:
//   HS256  JWT_SECRET signs; JWT_SECRET and every JWT_PREVIOUS_SECRETS entry verify.
//   ES256  (P-256) or EdDSA (Ed25519): the first of JWT_PRIVATE_KEYS signs, every one of
//          them verifies, and their public keys are published as a JWK Set (RFC 7517) so
//          that other back ends verify tokens without any shared secret.
// A token is only ever checked with the configured algorithm: the header's `alg` must be
// exactly it, and each key is bound to it, so an HS256 token "signed" with a public key
// (or an ES256 header over an HMAC) is refused (RFC 8725 §3.1, algorithm confusion).
// fast-jwt was chosen over jose by the benchmark (bench/jwt.ts): verification with its
// LRU cache costs a hash lookup, which keeps authenticated routes near bare Fastify speed.
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import { createSigner, createVerifier, TokenError } from 'fast-jwt'
import { AppError } from './errors.ts'
import { parsePemPrivateKeys } from './pem-keys.ts'

export const ACCESS_TOKEN_TTL = 15 * 60
/** Seconds an `iat` may lie ahead of our clock (another instance's clock may run fast). */
export const MAX_CLOCK_SKEW = 60

/**
 * The `aud` of the service's own access tokens (CONTRACT §4, §11): `{PUBLIC_URL}/v1`. The
 * /v1 API accepts only tokens naming exactly it, so no token minted for a tenant's
 * application (whose `aud` is a client id or a resource identifier) ever opens it, and a
 * token of ours is never taken for one of theirs (RFC 8725 §3.9, RFC 9068 §4).
 */
export function firstPartyAudience(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1`
}

export const JWT_ALGORITHMS = ['HS256', 'ES256', 'EdDSA'] as const
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number]
export type AsymmetricAlgorithm = Exclude<JwtAlgorithm, 'HS256'>

export interface AccessClaims {
  iss: string
  /** firstPartyAudience(PUBLIC_URL): the token opens the service's own /v1 API. */
  aud: string
  sub: string
  tid: string
  role: string
  /** The user's custom role names at issue, sorted (CONTRACT §17); absent when none. */
  roles?: string[]
  sid: string
  iat: number
  exp: number
  jti: string
  /** The administrator signed in as the user (CONTRACT §22 impersonation): RFC 8693's act. */
  act?: { sub: string }
  /** An organization token (CONTRACT §18): the organization, and the roles held there. */
  org_id?: string
  org_roles?: string[]
}

/** A public key as GET /.well-known/jwks.json lists it: never a private member. */
export interface PublicJwk {
  kty: string
  crv: string
  x: string
  y?: string
  kid: string
  alg: AsymmetricAlgorithm
  use: 'sig'
}

/** The `kid` of an HS256 secret: a digest prefix, so the secret itself never shows. */
export function keyId(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url').slice(0, 12)
}

/**
 * The `kid` of a public key: its JWK thumbprint (RFC 7638), the SHA-256 of the required
 * members in lexicographic order. Stable across restarts, instances and PEM encodings.
 */
export function publicKeyId(key: KeyObject): string {
  const publicKey = key.type === 'public' ? key : createPublicKey(key)
  const jwk = publicKey.export({ format: 'jwk' })
  const required =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : { crv: jwk.crv, kty: jwk.kty, x: jwk.x }
  return createHash('sha256').update(JSON.stringify(required)).digest('base64url')
}

/** Why `key` cannot sign with `algorithm`, or undefined when it can. */
export function keyMismatch(key: KeyObject, algorithm: AsymmetricAlgorithm): string | undefined {
  if (algorithm === 'ES256') {
    const p256 =
      key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
    return p256 ? undefined : 'ES256 needs an EC key on the P-256 curve'
  }
  return key.asymmetricKeyType === 'ed25519' ? undefined : 'EdDSA needs an Ed25519 key'
}

/**
 * JWT_PRIVATE_KEYS: PEM private keys, newest first (lib/pem-keys.ts), each of them able to
 * sign with `algorithm`. Answers the keys as PKCS#8 PEM, or a problem naming the block
 * that is wrong.
 */
export function parsePrivateKeys(
  raw: string,
  algorithm: AsymmetricAlgorithm,
): { keys: string[] } | { problem: string } {
  return parsePemPrivateKeys(raw, (key, n) => {
    const mismatch = keyMismatch(key, algorithm)
    return mismatch ? `key ${n}: ${mismatch}` : undefined
  })
}

export type SigningKeys =
  | { algorithm: 'HS256'; secrets: string[] }
  | { algorithm: AsymmetricAlgorithm; privateKeys: string[] }

interface KeyEntry {
  kid: string
  /** What the signer takes: the secret, or the private key's PEM. */
  signing: string
  /** What the verifier takes: the secret, or the public key's PEM. */
  verifying: string
  jwk?: PublicJwk
}

export class AccessTokens {
  readonly algorithm: JwtAlgorithm
  private readonly sign: (payload: Record<string, unknown>) => string
  private readonly verifiers: Map<string, (token: string) => AccessClaims>
  private readonly issuer: string
  readonly audience: string
  private readonly publicKeys: PublicJwk[]
  /**
   * The claims of the tokens verified last, keyed by the token itself: a token seen again
   * (every request of a session for 15 minutes) skips the header parse and fast-jwt's
   * cache, which keys by a SHA-256 of the token (a fifth of GET /me's own work, issue 10).
   * Only its expiry is checked again. First in, first out, RECENT_TOKENS at most.
   */
  private readonly recent = new Map<string, AccessClaims>()

  /** `keys` newest first: the first signs, all verify. */
  constructor(options: { keys: SigningKeys; issuer: string }) {
    const { keys } = options
    this.algorithm = keys.algorithm
    this.issuer = options.issuer
    this.audience = firstPartyAudience(options.issuer)
    const entries = keys.algorithm === 'HS256' ? secretEntries(keys.secrets) : keyEntries(keys)
    if (entries.length === 0) throw new Error('AccessTokens: no signing key')
    this.sign = createSigner({
      key: entries[0].signing,
      algorithm: keys.algorithm,
      kid: entries[0].kid,
    })
    this.verifiers = new Map()
    for (const entry of entries) {
      this.verifiers.set(
        entry.kid,
        createVerifier({
          key: entry.verifying,
          algorithms: [keys.algorithm],
          allowedIss: options.issuer,
          allowedAud: this.audience,
          requiredClaims: ['iss', 'aud', 'sub', 'tid', 'sid', 'role', 'iat', 'exp', 'jti'],
          cache: 10_000,
        }),
      )
    }
    this.publicKeys = entries.flatMap((e) => (e.jwk ? [e.jwk] : []))
  }

  /**
   * `extra`: claims a tenant's custom_access_token hook added (CONTRACT §21); they never
   * replace one of the service's own (the hook's reserved names were dropped already).
   */
  issue(
    claims: Omit<AccessClaims, 'iss' | 'aud' | 'iat' | 'exp'>,
    now: Date,
    extra: Record<string, unknown> = {},
  ): string {
    const iat = Math.floor(now.getTime() / 1000)
    const standard = { iss: this.issuer, aud: this.audience, iat, exp: iat + ACCESS_TOKEN_TTL }
    return this.sign({ ...extra, ...claims, ...standard })
  }

  /** The JWK Set of the verifying keys, signing key first; empty with HS256. */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.publicKeys.map((k) => ({ ...k })) }
  }

  /**
   * Verifies signature, algorithm, issuer, audience (exactly ours: a list that merely
   * includes it is refused too) and expiry, then the token's own lifetime
   * (CONTRACT §8): one that claims to live longer than ours, or to be issued more than
   * MAX_CLOCK_SKEW in the future, was not minted here, whatever its signature says.
   * Throws a 401 AppError.
   */
  verify(token: string, now: Date): AccessClaims {
    const known = this.recent.get(token)
    if (known) {
      // fast-jwt's rule: valid up to and including the second of `exp` (real time).
      if (Date.now() > known.exp * 1000) {
        this.recent.delete(token)
        throw new AppError('token_expired')
      }
      return known
    }
    const verifier = this.verifiers.get(headerKid(token, this.algorithm))
    if (!verifier) throw new AppError('token_invalid')
    let claims: AccessClaims
    try {
      claims = verifier(token)
    } catch (error) {
      if (error instanceof TokenError && error.code === TokenError.codes.expired) {
        throw new AppError('token_expired')
      }
      throw new AppError('token_invalid')
    }
    const nowSeconds = Math.floor(now.getTime() / 1000)
    if (
      claims.aud !== this.audience ||
      typeof claims.iat !== 'number' ||
      typeof claims.exp !== 'number' ||
      claims.exp - claims.iat > ACCESS_TOKEN_TTL ||
      claims.iat > nowSeconds + MAX_CLOCK_SKEW
    ) {
      throw new AppError('token_invalid')
    }
    if (this.recent.size >= RECENT_TOKENS) this.recent.delete(this.recent.keys().next().value ?? '')
    this.recent.set(token, claims)
    return claims
  }
}

/** About 0.6 MB of tokens and claims at most. */
const RECENT_TOKENS = 1024

function secretEntries(secrets: string[]): KeyEntry[] {
  return secrets.map((secret) => ({ kid: keyId(secret), signing: secret, verifying: secret }))
}

function keyEntries(keys: { algorithm: AsymmetricAlgorithm; privateKeys: string[] }) {
  return keys.privateKeys.map((pem): KeyEntry => {
    const publicKey = createPublicKey(createPrivateKey(pem))
    const kid = publicKeyId(publicKey)
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' })
    if (!kty || !crv || !x) throw new Error('AccessTokens: not an EC or OKP key')
    // Only the public members are copied: `d` cannot reach the JWK Set.
    const jwk: PublicJwk = {
      kty,
      crv,
      x,
      ...(y ? { y } : {}),
      kid,
      alg: keys.algorithm,
      use: 'sig',
    }
    return {
      kid,
      signing: pem,
      verifying: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      jwk,
    }
  })
}

/** The `kid` of a token whose header names exactly our algorithm; else none of our keys. */
function headerKid(token: string, algorithm: JwtAlgorithm): string {
  const dot = token.indexOf('.')
  if (dot <= 0) return ''
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'))
    if (header?.alg !== algorithm || typeof header.kid !== 'string') return ''
    return header.kid
  } catch {
    return ''
  }
}
