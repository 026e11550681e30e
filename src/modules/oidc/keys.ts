// The provider's signing keys as the JWK Set oidc-provider takes (CONTRACT §11): every key
// of OIDC_SIGNING_KEYS with its `kid` (the RFC 7638 thumbprint, stable across restarts and
// instances) and its one algorithm. oidc-provider signs with the first key of the algorithm
// asked for (newest first) and publishes the public parts only at {issuer}/jwks.
import { createHash, createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto'
import { oidcKeyAlgorithm } from '../../lib/oidc-keys.ts'

export interface SigningJwk extends JsonWebKey {
  kid: string
  alg: 'RS256' | 'ES256'
  use: 'sig'
}

/** Built once per process from the configured PEMs, shared by every tenant's Provider. */
export function signingJwks(pems: string[]): { keys: SigningJwk[] } {
  return {
    keys: pems.map((pem) => {
      const key = createPrivateKey(pem)
      const alg = oidcKeyAlgorithm(key)
      if (typeof alg === 'object') throw new Error(alg.problem) // config.ts checked it
      return { ...key.export({ format: 'jwk' }), kid: thumbprint(pem), alg, use: 'sig' }
    }),
  }
}

/** RFC 7638: the SHA-256 of the key type's required public members, in lexicographic order. */
function thumbprint(pem: string): string {
  const jwk = createPublicKey(pem).export({ format: 'jwk' })
  const required =
    jwk.kty === 'RSA'
      ? { e: jwk.e, kty: jwk.kty, n: jwk.n }
      : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
  return createHash('sha256').update(JSON.stringify(required)).digest('base64url')
}
