// npm run bench:import: users imported per second by `npm run import` (CONTRACT §14,
// target ≥ 5,000/s) with bcrypt hashes stored, end to end: the CSV read and posted by
// scripts/import.ts, the service started as `npm start` runs it on PostgreSQL, each batch
// one transaction. A separate figure from `npm run bench`, which it does not run.
// Needs PostgreSQL: BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/tenant_auth_bench
// (created when missing).   BENCH_IMPORT_USERS=50000 (how many), BENCH_ROUNDS=3.
//
// Memory (the "1,000,000-user import with flat memory", a README figure, not CI):
// every BENCH_SAMPLE_EVERY users (default a twentieth of the round, at least 10,000) the
// round samples the RSS and heap of the import (scripts/import.ts's runImport, run in this
// process, which does nothing else meanwhile) and of the service (its /metrics). It prints
// the first, the reference (the sample at 100,000 users, or at a tenth of a smaller round)
// and the last, with the last's margin over the reference: flat when neither process's
// RSS ends more than 20 % above its reference. For the figure:
//   BENCH_IMPORT_USERS=1000000 BENCH_ROUNDS=1 npm run bench:import
// The CSV is written as a stream (one bcrypt hash for every row: the import stores it, it
// never checks it), so generating it holds no more than one chunk of rows either.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { runImport } from '../scripts/import.ts'
import { START_ARGS } from '../test/start-args.ts'

const USERS = Number(process.env.BENCH_IMPORT_USERS ?? 50_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DB_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/tenant_auth_bench'
const PORT = Number(process.env.BENCH_IMPORT_PORT ?? 3903)
const SAMPLE_EVERY = Number(
  process.env.BENCH_SAMPLE_EVERY ?? Math.max(10_000, Math.round(USERS / 20 / 1000) * 1000),
)
/** The sample the last is compared with: at 100,000 users, or a tenth of a smaller round. */
const REFERENCE_AT = Math.min(100_000, Math.max(SAMPLE_EVERY, Math.round(USERS / 10)))
const FLAT_MARGIN = 0.2
const METRICS_TOKEN = 'import-bench-metrics'
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
      METRICS_TOKEN,
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

/** The service's RSS and V8 heap in use, from its Prometheus metrics. */
async function serviceMemory(): Promise<{ rss: number; heap: number }> {
  const res = await fetch(`${base}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  })
  const text = await res.text()
  const metric = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1])
  return {
    rss: metric('process_resident_memory_bytes'),
    heap: metric('nodejs_heap_size_used_bytes'),
  }
}

interface Sample {
  users: number
  importRss: number
  importHeap: number
  serviceRss: number
  serviceHeap: number
}

/** Writes the round's CSV as a stream, a chunk of rows at a time. */
async function writeCsv(file: string, slug: string): Promise<void> {
  const out = createWriteStream(file)
  out.write('email,emailVerified,passwordHash,displayName\n')
  const CHUNK = 10_000
  for (let from = 0; from < USERS; from += CHUNK) {
    let text = ''
    for (let i = from; i < Math.min(USERS, from + CHUNK); i++) {
      text += `user${i}@${slug}.example,true,${HASH},User ${i}\n`
    }
    if (!out.write(text)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}

const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`

/** First, reference and last samples, and whether each process's RSS stayed flat. */
function reportMemory(samples: Sample[]): boolean {
  if (samples.length < 2) return true
  const first = samples[0]
  const reference = samples.find((s) => s.users >= REFERENCE_AT) ?? first
  const last = samples[samples.length - 1]
  const line = (label: string, s: Sample) =>
    `  ${label.padEnd(10)} ${s.users.toLocaleString('en').padStart(9)} users: import RSS ${mb(s.importRss)}, heap ${mb(s.importHeap)}; service RSS ${mb(s.serviceRss)}, heap ${mb(s.serviceHeap)}`
  console.log(`memory, sampled every ${SAMPLE_EVERY.toLocaleString('en')} users:`)
  console.log(line('first', first))
  console.log(line('reference', reference))
  console.log(line('last', last))
  let flat = true
  for (const [name, rss, heap] of [
    ['import', 'importRss', 'importHeap'],
    ['service', 'serviceRss', 'serviceHeap'],
  ] as const) {
    const margin = last[rss] / reference[rss] - 1
    const peak = Math.max(...samples.map((s) => s[rss]))
    const ok = margin <= FLAT_MARGIN
    flat &&= ok
    console.log(
      `  ${name} RSS: last ${margin >= 0 ? '+' : ''}${(margin * 100).toFixed(1)} % against the reference (flat: ≤ +${FLAT_MARGIN * 100} %) ${ok ? 'PASS' : 'FAIL'}; peak ${mb(peak)}; heap ${mb(reference[heap])} → ${mb(last[heap])}`,
    )
  }
  return flat
}

await ensureDatabase(DB_URL)
const service = await startService()
const dir = mkdtempSync(join(tmpdir(), 'bench-import-'))
const rates: number[] = []
let flat = true
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
    const generated = performance.now()
    await writeCsv(file, slug)
    if (USERS >= 100_000) {
      console.log(
        `round ${round + 1}: CSV of ${USERS.toLocaleString('en')} users written in ${((performance.now() - generated) / 1000).toFixed(1)} s`,
      )
    }
    const samples: Promise<Sample>[] = []
    const sample = async (users: number): Promise<Sample> => {
      const own = process.memoryUsage()
      const theirs = await serviceMemory()
      return {
        users,
        importRss: own.rss,
        importHeap: own.heapUsed,
        serviceRss: theirs.rss,
        serviceHeap: theirs.heap,
      }
    }
    samples.push(sample(0))
    let nextSample = SAMPLE_EVERY
    const started = performance.now()
    const summary = await runImport({
      url: base,
      tenant: slug,
      apiKey: key.plaintext,
      source: 'csv',
      file,
      onConflict: 'skip',
      onProgress: (progress) => {
        if (progress.read < nextSample) return
        nextSample = (Math.floor(progress.read / SAMPLE_EVERY) + 1) * SAMPLE_EVERY
        samples.push(sample(progress.read))
      },
    })
    const seconds = (performance.now() - started) / 1000
    if (summary.created !== USERS) throw new Error(`created ${summary.created} of ${USERS}`)
    rates.push(USERS / seconds)
    console.log(
      `round ${round + 1}: ${USERS} users in ${seconds.toFixed(2)} s, ${Math.round(USERS / seconds)} users/s`,
    )
    flat = reportMemory(await Promise.all(samples)) && flat
    rmSync(file, { force: true })
  }
  const sorted = [...rates].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]
  console.log(
    `import: median ${Math.round(median)} users/s (target ≥ 5,000) ${median >= 5000 ? 'PASS' : 'FAIL'}`,
  )
  console.log(
    `memory: ${flat ? 'flat' : 'NOT flat'} (last RSS ≤ reference + ${FLAT_MARGIN * 100} %)`,
  )
} finally {
  service.kill('SIGTERM')
  rmSync(dir, { recursive: true, force: true })
}
