// npm run bench:sizing: how many sign-ins, refreshes and GET /me one core of the service
// serves, from CPU accounting (the user + system time of the service processes, read from
// /proc, per answered request) rather than from req/s, which other work on the machine
// moves. Run with 1 and with 3 instances behind no balancer: autocannon spreads the same
// 16 connections over the instances, after an uncounted warm-up run of each path.
// PostgreSQL's CPU per request is printed beside it.
// The environment reaches the services as set (REDIS_URL, NODE_ENV and its secrets): with
// more than one instance, set REDIS_URL, as a deployment of several instances must.
//   BENCH_DATABASE_URL (as npm run bench)   SIZING_INSTANCES=1,3   BENCH_SECONDS=5
//   BENCH_PORT=3901 (the first instance's; the others take the next ports)
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import pg from 'pg'
import { START_ARGS } from '../test/start-args.ts'

const DB_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/tenant_auth_bench'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const PORT = Number(process.env.BENCH_PORT ?? 3901)
const COUNTS = (process.env.SIZING_INSTANCES ?? '1,3').split(',').map(Number)
const CONNECTIONS = 16
const PASSWORD = 'plum-orbit-canvas-77'
const UNLIMITED = '100000000/60'
const ENV = {
  DATABASE_URL: DB_URL,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  DATA_DIR: '/tmp/tenant-auth-bench',
  RATE_LIMIT_TENANT_CREATION: UNLIMITED,
  RATE_LIMIT_TOKEN_ENDPOINTS: UNLIMITED,
  RATE_LIMIT_LOGIN_FAILURES_PER_IP: UNLIMITED,
  RATE_LIMIT_LOGIN_FAILURES: UNLIMITED,
  RATE_LIMIT_ACCOUNT_FAILURES: UNLIMITED,
}

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL')
})

const rows: string[] = []
for (const n of COUNTS) {
  const ports = Array.from({ length: n }, (_, i) => PORT + i)
  const services: ChildProcess[] = []
  for (const port of ports) services.push(await start(port)) // one after the other: migrations
  const base = (i: number) => `http://127.0.0.1:${ports[i % n]}`
  const slug = `sizing-${randomBytes(4).toString('hex')}`
  const email = `admin-${slug}@example.com`
  const created = await post(`${base(0)}/v1/tenants`, {
    tenant: { slug, name: 'Sizing' },
    admin: { email, password: PASSWORD },
  })
  const tenantId: string = created.user.tenantId
  const tokens = await seedRefreshTokens(tenantId, created.user.id, 8000 * (SECONDS + 2))
  const paths = {
    'sign-in': (i: number) => ({
      url: `${base(i)}/v1/${slug}/auth/login`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    }),
    refresh: (i: number) => ({
      url: `${base(i)}/v1/${slug}/auth/refresh`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (req: any) => ({ ...req, body: refreshBody(tokens) }) }],
    }),
    'GET /me': (i: number) => ({
      url: `${base(i)}/v1/${slug}/me`,
      headers: { authorization: `Bearer ${created.accessToken}` },
    }),
  }
  for (const [name, options] of Object.entries(paths)) {
    // One uncounted run first: a fresh instance's first seconds run unoptimised code.
    await Promise.all(
      ports.map((_, i) =>
        autocannon({ ...options(i), connections: 2, duration: 2 } as autocannon.Options),
      ),
    )
    const before = services.map(cpuSeconds)
    const pgBefore = postgresCpuSeconds()
    const results = await Promise.all(
      ports.map((_, i) =>
        autocannon({
          ...options(i),
          connections: Math.ceil(CONNECTIONS / n),
          duration: SECONDS,
        } as autocannon.Options),
      ),
    )
    const cpu = services.reduce((sum, s, i) => sum + cpuSeconds(s) - before[i], 0)
    const pgCpu = postgresCpuSeconds() - pgBefore
    const ok = results.reduce((sum, r) => sum + r['2xx'], 0)
    const all = results.reduce((sum, r) => sum + r.requests.total, 0)
    if (ok !== all) console.error(`${name}: ${all - ok} of ${all} answers were not 2xx`)
    const ms = (cpu * 1000) / ok
    const pgMs = (pgCpu * 1000) / ok
    rows.push(
      `${String(n).padStart(9)}  ${name.padEnd(8)} ${(ok / SECONDS).toFixed(0).padStart(7)}  ${ms.toFixed(3).padStart(8)}  ${(1000 / ms).toFixed(0).padStart(9)}  ${pgMs.toFixed(3).padStart(8)}  ${(1000 / pgMs).toFixed(0).padStart(9)}`,
    )
    console.log(rows.at(-1))
  }
  for (const s of services) await stop(s)
}
console.log('\ninstances  path       req/s  cpu ms/req  per core  pg ms/req  per pg core')
for (const row of rows) console.log(row)
process.exit(0)

function refreshBody(tokens: string[]): string {
  return JSON.stringify({ refreshToken: tokens.pop() })
}

async function start(port: number): Promise<ChildProcess> {
  const [file, ...flags] = [...START_ARGS].reverse()
  const child = spawn(process.execPath, [...flags.reverse(), file], {
    // One PUBLIC_URL for all, as behind a balancer: tokens name it (iss, aud).
    env: { ...process.env, ...ENV, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${PORT}` },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.add(child)
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/ready`)).status === 200) return child
    } catch {}
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`port ${port} did not become ready`)
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGTERM')
  await exited
  children.delete(child)
}

function cpuSeconds(child: ChildProcess | number | undefined): number {
  const pid = typeof child === 'object' ? child.pid : child
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds of the PostgreSQL backends serving the bench database. */
function postgresCpuSeconds(): number {
  const database = new URL(DB_URL).pathname.slice(1)
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (title.startsWith('postgres: ') && title.includes(` ${database} `)) {
        total += cpuSeconds(Number(entry))
      }
    } catch {}
  }
  return total
}

async function post(url: string, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (res.status !== 200 && res.status !== 201) throw new Error(`${url}: ${res.status}`)
  return res.json() as Promise<any>
}

/** Sessions with known refresh tokens, inserted directly (as bench/run.ts seeds them). */
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
  await client.query('ANALYZE sessions, refresh_tokens, users')
  await client.end()
  return tokens
}
