// The service as an operator runs it: `npm start` (test/start-args.ts) with environment
// variables.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { after, test } from 'node:test'
import { STRONG_PASSWORD, tempDir, uniqueEmail, uniqueSlug } from './helpers.ts'
import { START_ARGS } from './start-args.ts'

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

// Every server a test starts; one left running by a failed test would keep this file's
// process, and so the whole test run, from ever ending.
const children = new Set<ChildProcess>()
after(() => {
  for (const child of children) child.kill('SIGKILL')
})

function run(env: Record<string, string>): {
  child: ChildProcess
  output: () => string
  exit: Promise<number | null>
} {
  let out = ''
  const child = spawn(process.execPath, [...START_ARGS], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  child.on('exit', () => children.delete(child))
  child.stdout?.on('data', (d) => {
    out += d
  })
  child.stderr?.on('data', (d) => {
    out += d
  })
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => out, exit }
}

// A first start on disk runs initdb in WASM: seconds on an idle machine, far more on a
// loaded one, so the wait is generous (the test's own timeout still bounds it).
const READY_WAIT_MS = 90_000

async function waitReady(base: string): Promise<void> {
  const until = Date.now() + READY_WAIT_MS
  while (Date.now() < until) {
    try {
      const res = await fetch(`${base}/ready`)
      if (res.status === 200) return
    } catch {}
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('server did not become ready')
}

test('bad configuration stops the process with one line per mistake', async () => {
  const { exit, output } = run({
    DATA_DIR: tempDir(),
    PORT: 'x',
    TRUST_PROXY: 'maybe',
  })
  assert.equal(await exit, 1)
  const lines = output().trim().split('\n')
  assert.deepEqual(lines, [
    'config error: PORT: must be an integer from 0 to 65535',
    'config error: TRUST_PROXY: must be true, false, a number of proxies, or a list of proxy addresses',
  ])
})

test('production refuses missing secrets at start', async () => {
  const { exit, output } = run({
    NODE_ENV: 'production',
    DATA_DIR: tempDir(),
  })
  assert.equal(await exit, 1)
  assert.match(output(), /JWT_SECRET: required when NODE_ENV=production/)
  assert.match(output(), /ENCRYPTION_KEYS: required/)
  assert.match(output(), /SMTP_URL: required/)
})

test('the embedded database keeps its data in DATA_DIR across restarts', async () => {
  const dataDir = tempDir('auth-data-')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = { DATA_DIR: dataDir, PORT: String(port) }
  const slug = uniqueSlug()
  const email = uniqueEmail()

  const first = run(env)
  await waitReady(base)
  const created = await fetch(`${base}/v1/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      tenant: { slug, name: 'Kept' },
      admin: { email, password: STRONG_PASSWORD },
    }),
  })
  assert.equal(created.status, 200)
  const { accessToken } = (await created.json()) as { accessToken: string }
  first.child.kill('SIGTERM')
  assert.equal(await first.exit, 0)

  // Same data and same generated secrets: the earlier access token is still good.
  const second = run(env)
  await waitReady(base)
  const me = await fetch(`${base}/v1/${slug}/me`, {
    headers: { authorization: `Bearer ${accessToken}` },
  })
  assert.equal(me.status, 200)
  const login = await fetch(`${base}/v1/${slug}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: STRONG_PASSWORD }),
  })
  assert.equal(login.status, 200)
  second.child.kill('SIGTERM')
  assert.equal(await second.exit, 0)
})

test('SIGTERM lets in-flight requests finish, then exits 0', async () => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const proc = run({
    DATA_DIR: tempDir(),
    DATABASE_URL: 'memory://',
    PORT: String(port),
    LOG_LEVEL: 'info', // the request log line tells the test the request has arrived
  })
  await waitReady(base)
  const slug = uniqueSlug()
  // A tenant creation hashes a password: it is still running when the signal arrives.
  const inFlight = fetch(`${base}/v1/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      tenant: { slug, name: 'Drain' },
      admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
    }),
  })
  // The signal goes once the server has the request (a fixed pause loses that race under load).
  const until = Date.now() + 15_000
  while (Date.now() < until && !proc.output().includes('"url":"/v1/tenants"')) {
    await new Promise((r) => setTimeout(r, 2))
  }
  assert.match(proc.output(), /"url":"\/v1\/tenants"/, 'the request reached the server')
  proc.child.kill('SIGTERM')
  const res = await inFlight
  assert.equal(res.status, 200)
  assert.equal(await proc.exit, 0)
  // And the logs never held the password.
  assert.doesNotMatch(proc.output(), new RegExp(STRONG_PASSWORD))
})

test('an idle service gives its empty heap pages back after the start, and not while requests arrive', async () => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const proc = run({
    DATA_DIR: tempDir(),
    DATABASE_URL: 'memory://',
    PORT: String(port),
    LOG_LEVEL: 'debug',
  })
  await waitReady(base)
  const compactions = () =>
    proc
      .output()
      .split('\n')
      .filter((line) => line.includes('"heap compacted while idle"'))
      .map((line) => JSON.parse(line) as { heapTotalMb: number[] })
  const until = Date.now() + 15_000
  while (compactions().length === 0 && Date.now() < until)
    await new Promise((r) => setTimeout(r, 200))
  const [first] = compactions()
  assert.ok(first, 'compacted after the start')
  assert.ok(first.heapTotalMb[1] < first.heapTotalMb[0], JSON.stringify(first))
  // Requests keep it from compacting while they arrive (the next one is at least 30 s away).
  for (let i = 0; i < 5; i++) assert.equal((await fetch(`${base}/health`)).status, 200)
  assert.equal(compactions().length, 1)
  proc.child.kill('SIGTERM')
  assert.equal(await proc.exit, 0)
})

test('the start says, beside the JSON log, which address to open: one plain line on stderr, stdout JSON only', async () => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  // The log at info, as `npm start` runs by default: every stdout line stays a JSON object.
  const started = run({ DATA_DIR: tempDir(), PORT: String(port), LOG_LEVEL: 'info' })
  let stdout = ''
  let stderr = ''
  started.child.stdout?.on('data', (d) => {
    stdout += d
  })
  started.child.stderr?.on('data', (d) => {
    stderr += d
  })
  await waitReady(base)
  started.child.kill('SIGTERM')
  assert.equal(await started.exit, 0)
  assert.deepEqual(
    stderr.trim().split('\n'),
    [`tenant-auth listening: open http://localhost:${port}/`],
    'one human line on stderr',
  )
  const lines = stdout.trim().split('\n')
  assert.ok(lines.length > 0)
  for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line)
})
