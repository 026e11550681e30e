// The baselines of the speed targets: a bare Fastify app doing the least database work
// each of our routes must do. Started as its own process by bench/run.ts.
//   GET  /bare/me       one primary-key SELECT of a user
//   POST /bare/refresh  BEGIN; UPDATE one refresh token; INSERT its successor; COMMIT
//   POST /bare/login    the least a password sign-in does: SELECT the user by address,
//                       argon2id verify (OWASP parameters, the service's), INSERT a refresh
//                       token, sign an HS256 JWT (fast-jwt, as the service signs), at most
//                       BARE_HASH_SLOTS verifies in flight (the service's default)
//   POST /bare/sign     a JWT signed as the OpenID provider signs an access token: the
//                       claims and header posted (from a token of the same run) with a new
//                       jti, iat and exp, with BARE_SIGNING_KEY (the provider's key) and
//                       jose, which oidc-provider signs with
import { createHash, createPrivateKey, randomBytes } from 'node:crypto'
import { verify } from '@node-rs/argon2'
import { createSigner } from 'fast-jwt'
import Fastify from 'fastify'
import { CompactSign } from 'jose'
import pg from 'pg'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const app = Fastify({ logger: false })
const hash = (t: string) => createHash('sha256').update(t).digest('base64url')

app.get('/bare/ready', async () => ({ ok: true }))

app.get('/bare/me', async (request) => {
  const { tenant, user } = request.query as { tenant: string; user: string }
  const { rows } = await pool.query({
    name: 'bare-me',
    text: 'SELECT id, email, status, role FROM users WHERE tenant_id = $1 AND id = $2',
    values: [tenant, user],
  })
  return rows[0]
})

app.post('/bare/refresh', async (request) => {
  const { tenant, token } = request.body as { tenant: string; token: string }
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const spent = await client.query({
      name: 'bare-spend',
      text: 'UPDATE refresh_tokens SET used_at = now() WHERE tenant_id = $1 AND token_hash = $2 AND used_at IS NULL RETURNING session_id, user_id',
      values: [tenant, hash(token)],
    })
    const next = randomBytes(32).toString('base64url')
    const row = spent.rows[0]
    if (row) {
      await client.query({
        name: 'bare-insert',
        text: "INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, now(), now() + interval '30 days')",
        values: [tenant, hash(next), row.session_id, row.user_id],
      })
    }
    await client.query('COMMIT')
    return { refreshToken: next }
  } finally {
    client.release()
  }
})

// The hashes in flight are bounded as the service bounds them (HASH_CONCURRENCY), the rest
// wait their turn: more in flight only adds 19 MiB each and thread switching.
const hashSlots = Number(process.env.BARE_HASH_SLOTS ?? 3)
let hashing = 0
const waiting: (() => void)[] = []
async function bounded<T>(job: () => Promise<T>): Promise<T> {
  if (hashing >= hashSlots) await new Promise<void>((resolve) => waiting.push(resolve))
  else hashing++
  try {
    return await job()
  } finally {
    const next = waiting.shift()
    if (next) next()
    else hashing--
  }
}
const signJwt = createSigner({
  key: 'bare-bench-secret-bare-bench-secret-0123',
  algorithm: 'HS256',
  expiresIn: 900_000,
})

app.post('/bare/login', async (request, reply) => {
  const { tenant, email, password, session } = request.body as {
    tenant: string
    email: string
    password: string
    session: string
  }
  const { rows } = await pool.query({
    name: 'bare-user',
    text: 'SELECT id, role, password_hash FROM users WHERE tenant_id = $1 AND email_normalized = $2 AND deleted_at IS NULL',
    values: [tenant, email],
  })
  const user = rows[0]
  if (!user || !(await bounded(() => verify(user.password_hash, password)))) {
    return reply.code(401).send({ code: 'UNAUTHORIZED' })
  }
  const refreshToken = randomBytes(32).toString('base64url')
  await pool.query({
    name: 'bare-login-insert',
    text: "INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, now(), now() + interval '30 days')",
    values: [tenant, hash(refreshToken), session, user.id],
  })
  const accessToken = signJwt({
    sub: user.id,
    tid: tenant,
    role: user.role,
    sid: session,
    jti: randomBytes(12).toString('base64url'),
  })
  return { accessToken, refreshToken }
})

const signingKey = process.env.BARE_SIGNING_KEY
  ? createPrivateKey(process.env.BARE_SIGNING_KEY)
  : undefined
const encoder = new TextEncoder()

app.post('/bare/sign', async (request) => {
  const { header, claims } = request.body as {
    header: { alg: string }
    claims: { iat: number; exp: number; scope: string }
  }
  if (!signingKey) throw new Error('BARE_SIGNING_KEY is not set')
  const iat = Math.floor(Date.now() / 1000)
  const payload = {
    ...claims,
    jti: randomBytes(32).toString('base64url').slice(0, 43),
    iat,
    exp: iat + (claims.exp - claims.iat),
  }
  const jwt = await new CompactSign(encoder.encode(JSON.stringify(payload)))
    .setProtectedHeader(header)
    .sign(signingKey)
  return {
    access_token: jwt,
    expires_in: claims.exp - claims.iat,
    token_type: 'Bearer',
    scope: claims.scope,
  }
})

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.on('SIGTERM', () =>
  app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0)),
)
