// npm run bench: prints the speed figures behind the design targets, measured here.
//   password login  vs  the argon2 bound (cores ÷ one verify)          target ≥ 0.9
//   GET /me         vs  bare Fastify + one primary-key SELECT           target ≥ 0.8
//   refresh         vs  bare Fastify + UPDATE+INSERT transaction        target ≥ 0.75
// It needs PostgreSQL (both servers must share one database): BENCH_DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/tenant_auth_bench (created when missing).
// Then it runs the other benchmarks of bench/ (JWT libraries, audit queries).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { hash, verify } from '@node-rs/argon2'
import autocannon from 'autocannon'
import pg from 'pg'
import { ARGON2_PARAMS } from '../src/lib/passwords.ts'

const DURATION = Number(process.env.BENCH_SECONDS ?? 8)
const DB_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/tenant_auth_bench'
const SERVICE_PORT = 3901
const BARE_PORT = 3902
const PASSWORD = 'plum-orbit-canvas-77'

await ensureDatabase(DB_URL)
const children: ChildProcess[] = []
process.on('exit', () => {
  for (const c of children) c.kill('SIGTERM')
})

// BENCH_PROFILE=1 writes a CPU profile of the service to /tmp/tenant-auth-profile/.
const profile = process.env.BENCH_PROFILE
  ? ['--cpu-prof', '--cpu-prof-dir=/tmp/tenant-auth-profile']
  : []
// BENCH_ONLY=login,me,refresh runs a subset.
const only = new Set((process.env.BENCH_ONLY ?? 'login,me,refresh').split(','))
const service = start(
  'src/server.ts',
  SERVICE_PORT,
  {
    DATABASE_URL: DB_URL,
    LOG_LEVEL: 'warn',
    DATA_DIR: '/tmp/tenant-auth-bench',
    RATE_LIMIT_TENANT_CREATION: '1000000/60',
    RATE_LIMIT_SIGNUP: '1000000/60',
    RATE_LIMIT_TOKEN_ENDPOINTS: '100000000/60',
  },
  profile,
)
await ready(SERVICE_PORT)
const bare = start('bench/bare.ts', BARE_PORT, { DATABASE_URL: DB_URL })
await ready(
  BARE_PORT,
  '/bare/me?tenant=00000000-0000-0000-0000-000000000000&user=00000000-0000-0000-0000-000000000000',
)

const base = `http://127.0.0.1:${SERVICE_PORT}`
const slug = `bench-${randomBytes(4).toString('hex')}`
const email = `admin-${slug}@example.com`
const created = await post(`${base}/v1/tenants`, {
  tenant: { slug, name: 'Bench' },
  admin: { email, password: PASSWORD },
})
const tenantId: string = created.user.tenantId
const userId: string = created.user.id

const results: {
  name: string
  rps: number
  p99: number
  baseline?: string
  ratio?: number
  target?: number
}[] = []

// 1. The argon2 bound: how many verifies per second the cores can do at all.
const stored = await hash(PASSWORD, ARGON2_PARAMS)
for (let i = 0; i < 5; i++) await verify(stored, PASSWORD)
const n = 40
const t0 = performance.now()
for (let i = 0; i < n; i++) await verify(stored, PASSWORD)
const verifyMs = (performance.now() - t0) / n
const cores = availableParallelism()
const argonBound = (cores * 1000) / verifyMs

if (only.has('login')) {
  const login = await load({
    url: `${base}/v1/${slug}/auth/login`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
    connections: cores * 4,
  })
  results.push({
    name: 'POST auth/login',
    ...login,
    baseline: `argon2 bound ${argonBound.toFixed(0)}/s`,
    ratio: login.rps / argonBound,
    target: 0.9,
  })
}

// 2. GET /me against one primary-key SELECT.
if (only.has('me')) {
  const me = await load({
    url: `${base}/v1/${slug}/me`,
    headers: { authorization: `Bearer ${created.accessToken}` },
    connections: 32,
  })
  const bareMe = await load({
    url: `http://127.0.0.1:${BARE_PORT}/bare/me?tenant=${tenantId}&user=${userId}`,
    connections: 32,
  })
  results.push({
    name: 'GET /me',
    ...me,
    baseline: `bare SELECT ${bareMe.rps.toFixed(0)}/s`,
    ratio: me.rps / bareMe.rps,
    target: 0.8,
  })
}

// 3. Refresh against a bare UPDATE+INSERT transaction; each request spends a fresh token.
if (only.has('refresh')) {
  const ours = await seedRefreshTokens(tenantId, userId, 120_000)
  const theirs = await seedRefreshTokens(tenantId, userId, 120_000)
  const refresh = await load({
    url: `${base}/v1/${slug}/auth/refresh`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections: 32,
    next: () => JSON.stringify({ refreshToken: ours.pop() }),
  })
  const bareRefresh = await load({
    url: `http://127.0.0.1:${BARE_PORT}/bare/refresh`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections: 32,
    next: () => JSON.stringify({ tenant: tenantId, token: theirs.pop() }),
  })
  results.push({
    name: 'POST auth/refresh',
    ...refresh,
    baseline: `bare txn ${bareRefresh.rps.toFixed(0)}/s`,
    ratio: refresh.rps / bareRefresh.rps,
    target: 0.75,
  })
}

console.log(
  `\nmachine: ${cores} cores; argon2id m=${ARGON2_PARAMS.memoryCost} t=${ARGON2_PARAMS.timeCost} p=1 verify ${verifyMs.toFixed(1)} ms; ${DURATION} s per run\n`,
)
console.log('route                 req/s     p99 ms   baseline                  ratio   target')
for (const r of results) {
  console.log(
    `${r.name.padEnd(20)} ${r.rps.toFixed(0).padStart(7)} ${r.p99.toFixed(1).padStart(9)}   ${(r.baseline ?? '').padEnd(24)} ${r.ratio?.toFixed(2).padStart(6) ?? ''}   ${r.target ?? ''}`,
  )
}

service.kill('SIGTERM')
bare.kill('SIGTERM')
await new Promise((resolve) => service.on('exit', resolve))

for (const extra of process.env.BENCH_ONLY ? [] : ['bench/jwt.ts', 'bench/audit.ts']) {
  if (!existsSync(extra)) continue
  console.log(`\n== ${extra}`)
  spawnSync(process.execPath, [extra], {
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: DB_URL },
  })
}
process.exit(0)

function start(
  file: string,
  port: number,
  env: Record<string, string>,
  flags: string[] = [],
): ChildProcess {
  const child = spawn(process.execPath, [...flags, file], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(child)
  return child
}

async function ready(port: number, path = '/ready'): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`)
      if (res.status === 200) return
    } catch {}
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`port ${port} did not become ready`)
}

async function post(url: string, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<any>
}

async function load(options: {
  url: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  connections: number
  next?: () => string
}): Promise<{ rps: number; p99: number }> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: DURATION,
    requests: options.next
      ? [{ setupRequest: (req: any) => ({ ...req, body: options.next?.() }) }]
      : undefined,
  })
  const ok = result.requests.total - result.non2xx - result.errors
  if (result.non2xx > 0 || result.errors > 0) {
    console.error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  }
  return { rps: ok / DURATION, p99: result.latency.p99 }
}

/** Sessions with known refresh tokens, inserted directly (signing in 100k times is not the point). */
async function seedRefreshTokens(tenant: string, user: string, count: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: DB_URL })
  await client.connect()
  const tokens: string[] = []
  const now = new Date()
  const expires = new Date(now.getTime() + 30 * 86400_000)
  for (let done = 0; done < count; done += 5000) {
    const ids: string[] = []
    const hashes: string[] = []
    for (let i = 0; i < 5000; i++) {
      const token = randomBytes(32).toString('base64url')
      tokens.push(token)
      ids.push(crypto.randomUUID())
      hashes.push(createHash('sha256').update(token).digest('base64url'))
    }
    await client.query(
      `INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at)
       SELECT $1, unnest($2::uuid[]), $3, $4, $5`,
      [tenant, ids, user, now, expires],
    )
    await client.query(
      `INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at)
       SELECT $1, unnest($2::text[]), unnest($3::uuid[]), $4, $5, $6`,
      [tenant, hashes, ids, user, now, expires],
    )
  }
  await client.end()
  return tokens
}

async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url)
  const name = target.pathname.slice(1)
  const admin = new URL(url)
  admin.pathname = '/postgres'
  const client = new pg.Client({ connectionString: admin.toString() })
  await client.connect()
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
  if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`)
  await client.end()
}
