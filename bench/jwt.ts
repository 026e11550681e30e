// Why fast-jwt: HS256 access-token verification per second, jose against fast-jwt (with
// and without its cache). Every authenticated request pays this once.
import { createSigner, createVerifier } from 'fast-jwt'
import { jwtVerify } from 'jose'

const secret = 'bench-secret-bench-secret-bench-secret-0001'
const key = new TextEncoder().encode(secret)
const claims = { sub: 'u', tid: 't', role: 'Member', sid: 's', jti: 'j', iss: 'http://x' }
const token = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 900_000 })(claims)
const N = 100_000

async function time(name: string, fn: () => unknown | Promise<unknown>) {
  for (let i = 0; i < 1000; i++) await fn()
  const t0 = performance.now()
  for (let i = 0; i < N; i++) await fn()
  const ms = performance.now() - t0
  console.log(`${name.padEnd(28)} ${((N / ms) * 1000).toFixed(0).padStart(9)} verifies/s`)
}

const plain = createVerifier({ key: secret, algorithms: ['HS256'], allowedIss: 'http://x' })
const cached = createVerifier({
  key: secret,
  algorithms: ['HS256'],
  allowedIss: 'http://x',
  cache: 10_000,
})
await time('jose jwtVerify', () =>
  jwtVerify(token, key, { algorithms: ['HS256'], issuer: 'http://x' }),
)
await time('fast-jwt', () => plain(token))
await time('fast-jwt with cache (ours)', () => cached(token))
