// Access tokens (CONTRACT §4): HS256 JWTs with a `kid` header so that keys can rotate.
// JWT_SECRET signs; JWT_SECRET and every JWT_PREVIOUS_SECRETS entry verify.
// fast-jwt was chosen over jose by the benchmark (bench/jwt.ts): verification with its
// LRU cache costs a hash lookup, which keeps authenticated routes near bare Fastify speed.
import { createHash } from 'node:crypto'
import { createSigner, createVerifier, TokenError } from 'fast-jwt'
import { AppError } from './errors.ts'

export const ACCESS_TOKEN_TTL = 15 * 60
/** Seconds an `iat` may lie ahead of our clock (another instance's clock may run fast). */
export const MAX_CLOCK_SKEW = 60

export interface AccessClaims {
  iss: string
  sub: string
  tid: string
  role: string
  sid: string
  iat: number
  exp: number
  jti: string
}

export function keyId(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url').slice(0, 12)
}

export class AccessTokens {
  private readonly sign: (payload: Record<string, unknown>) => string
  private readonly verifiers: Map<string, (token: string) => AccessClaims>
  private readonly issuer: string

  constructor(options: { secret: string; previous: string[]; issuer: string }) {
    this.issuer = options.issuer
    this.sign = createSigner({
      key: options.secret,
      algorithm: 'HS256',
      kid: keyId(options.secret),
    })
    this.verifiers = new Map()
    for (const secret of [options.secret, ...options.previous]) {
      this.verifiers.set(
        keyId(secret),
        createVerifier({
          key: secret,
          algorithms: ['HS256'],
          allowedIss: options.issuer,
          requiredClaims: ['iss', 'sub', 'tid', 'sid', 'role', 'iat', 'exp', 'jti'],
          cache: 10_000,
        }),
      )
    }
  }

  issue(claims: Omit<AccessClaims, 'iss' | 'iat' | 'exp'>, now: Date): string {
    const iat = Math.floor(now.getTime() / 1000)
    return this.sign({ ...claims, iss: this.issuer, iat, exp: iat + ACCESS_TOKEN_TTL })
  }

  /**
   * Verifies signature, algorithm, issuer and expiry, then the token's own lifetime
   * (CONTRACT §8): one that claims to live longer than ours, or to be issued more than
   * MAX_CLOCK_SKEW in the future, was not minted here, whatever its signature says.
   * Throws a 401 AppError.
   */
  verify(token: string, now: Date): AccessClaims {
    const verifier = this.verifiers.get(headerKid(token))
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
      typeof claims.iat !== 'number' ||
      typeof claims.exp !== 'number' ||
      claims.exp - claims.iat > ACCESS_TOKEN_TTL ||
      claims.iat > nowSeconds + MAX_CLOCK_SKEW
    ) {
      throw new AppError('token_invalid')
    }
    return claims
  }
}

/** The `kid` of a token whose header is exactly HS256; anything else has no key here. */
function headerKid(token: string): string {
  const dot = token.indexOf('.')
  if (dot <= 0) return ''
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'))
    if (header?.alg !== 'HS256' || typeof header.kid !== 'string') return ''
    return header.kid
  } catch {
    return ''
  }
}
