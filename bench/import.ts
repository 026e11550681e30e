// npm run bench:import: users imported per second by `npm run import` (CONTRACT §14,
// target ≥ 5,000/s) with bcrypt hashes stored, end to end: the CSV read and posted by
// scripts/import.ts, the service started as `npm start` runs it on PostgreSQL, each batch
// one transaction. A separate figure from `npm run bench`, which it does not run.
// Needs PostgreSQL: BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/tenant_auth_bench
// (created when missing).   BENCH_IMPORT_USERS=50000 (how many), BENCH_ROUNDS=3.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { runImport } from '../scripts/import.ts'
import { START_ARGS } from '../test/start-args.ts'

const USERS = Number(process.env.BENCH_IMPORT_USERS ?? 50_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DB_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/tenant_auth_bench'
const PORT = 3903
const base = `http://127.0.0.1:${PORT}`
// A real bcrypt hash (cost 10): the import stores it as given; checking it is sign-in's work.
const HASH = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'

async function ensureDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1)
  const admin = new URL(url)
  admin.pathname = '/postgres'
  const client = new pg.Client({ connectionString: admin.toString() })
  await client.connect()
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
  if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`)
  await client.end()
}

async function startService(): Promise<ChildProcess> {
  const [file, ...rest] = [...START_ARGS].reverse()
  const child = spawn(process.execPath, [...rest.reverse(), file], {
    env: {
      ...process.env,
      DATABASE_URL: DB_URL,
      PORT: String(PORT),
      LOG_LEVEL: 'warn',
      DATA_DIR: '/tmp/tenant-auth-bench',
      RATE_LIMIT_TENANT_CREATION: '1000000/60',
      RATE_LIMIT_ADMIN_REQUESTS: '100000000/60',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  process.on('exit', () => child.kill('SIGKILL'))
  for (let i = 0; i < 1200; i++) {
    try {
      if ((await fetch(`${base}/ready`)).status === 200) return child
    } catch {}
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('the service did not become ready')
}

async function post(url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  })
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<any>
}

await ensureDatabase(DB_URL)
const service = await startService()
const dir = mkdtempSync(join(tmpdir(), 'bench-import-'))
const rates: number[] = []
try {
  for (let round = 0; round < ROUNDS; round++) {
    const slug = `import-${randomBytes(4).toString('hex')}`
    const created = await post(`${base}/v1/tenants`, {
      tenant: { slug, name: 'Import bench' },
      admin: { email: `admin@${slug}.example`, password: 'plum-orbit-canvas-77' },
    })
    const key = await post(
      `${base}/v1/${slug}/api-keys`,
      { name: 'import', environment: 'live' },
      created.accessToken,
    )
    const file = join(dir, `${slug}.csv`)
    const rows = ['email,emailVerified,passwordHash,displayName']
    for (let i = 0; i < USERS; i++) rows.push(`user${i}@${slug}.example,true,${HASH},User ${i}`)
    writeFileSync(file, `${rows.join('\n')}\n`)
    const started = performance.now()
    const summary = await runImport({
      url: base,
      tenant: slug,
      apiKey: key.plaintext,
      source: 'csv',
      file,
      onConflict: 'skip',
    })
    const seconds = (performance.now() - started) / 1000
    if (summary.created !== USERS) throw new Error(`created ${summary.created} of ${USERS}`)
    rates.push(USERS / seconds)
    console.log(
      `round ${round + 1}: ${USERS} users in ${seconds.toFixed(2)} s, ${Math.round(USERS / seconds)} users/s`,
    )
  }
  const sorted = [...rates].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]
  console.log(
    `import: median ${Math.round(median)} users/s (target ≥ 5,000) ${median >= 5000 ? 'PASS' : 'FAIL'}`,
  )
} finally {
  service.kill('SIGTERM')
  rmSync(dir, { recursive: true, force: true })
}
