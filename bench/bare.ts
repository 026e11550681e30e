// The baselines of the speed targets: a bare Fastify app doing the least database work
// each of our routes must do. Started as its own process by bench/run.ts.
//   GET  /bare/me       one primary-key SELECT of a user
//   POST /bare/refresh  BEGIN; UPDATE one refresh token; INSERT its successor; COMMIT
import { createHash, randomBytes } from 'node:crypto'
import Fastify from 'fastify'
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

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.on('SIGTERM', () =>
  app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0)),
)
