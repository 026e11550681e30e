// Structured logs never contain passwords or tokens (issue 2: "structured logs (pino) that
// never contain passwords, tokens or codes"). The service runs as an operator runs it,
// with the most verbose log level, and every foundation route is exercised, failures too.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { after, before, test } from 'node:test'
import { tempDir, uniqueEmail, uniqueSlug } from './helpers.ts'
import { START_ARGS } from './start-args.ts'

const ADMIN_PASSWORD = 'log-canary-admin-Pw-5521'
const USER_PASSWORD = 'log-canary-user-Pw-7734'
const WRONG_PASSWORD = 'log-canary-wrong-Pw-9902'
const NEW_PASSWORD = 'log-canary-new-Pw-3318'

let child: ChildProcess
let closed: Promise<void>
let output = ''
let base = ''

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

before(async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  child = spawn(process.execPath, [...START_ARGS], {
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: tempDir('auth-logs-'),
      DATABASE_URL: 'memory://',
      PORT: String(port),
      LOG_LEVEL: 'trace',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  closed = new Promise((resolve) => child.once('close', () => resolve()))
  child.stdout?.on('data', (d) => {
    output += d
  })
  child.stderr?.on('data', (d) => {
    output += d
  })
  // Generous: a loaded machine can take many seconds to start the embedded database.
  for (let until = Date.now() + 90_000; Date.now() < until; ) {
    const ok = await fetch(`${base}/ready`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (ok) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`server did not become ready:\n${output}`)
})

/** Stops the server and waits until its output is closed, to the last line. */
async function stopServer(): Promise<void> {
  child.kill('SIGTERM')
  await closed
}

after(stopServer)

async function call(method: string, path: string, body?: unknown, token?: string, raw?: string) {
  const headers: Record<string, string> = {}
  if (token) headers.authorization = `Bearer ${token}`
  const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body))
  if (payload !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(base + path, { method, headers, body: payload })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

test('rule: logs never contain passwords or tokens', async () => {
  const slug = uniqueSlug()
  const adminEmail = uniqueEmail('admin')
  const created = await call('POST', '/v1/tenants', {
    tenant: { slug, name: 'Log Canary' },
    admin: { email: adminEmail, password: ADMIN_PASSWORD },
  })
  assert.equal(created.status, 200)
  const email = uniqueEmail()
  const signedUp = await call('POST', `/v1/${slug}/auth/signup`, { email, password: USER_PASSWORD })
  assert.equal(signedUp.status, 200)
  const wrong = await call('POST', `/v1/${slug}/auth/login`, { email, password: WRONG_PASSWORD })
  assert.equal(wrong.status, 401)
  const unknown = await call('POST', `/v1/${slug}/auth/login`, {
    email: uniqueEmail('ghost'),
    password: WRONG_PASSWORD,
  })
  assert.equal(unknown.status, 401)
  const malformed = await call(
    'POST',
    `/v1/${slug}/auth/login`,
    undefined,
    undefined,
    `{"email":"${email}","password":"${WRONG_PASSWORD}"`,
  )
  assert.equal(malformed.status, 400)
  const invalid = await call('POST', `/v1/${slug}/auth/signup`, {
    email: 'not-an-email',
    password: WRONG_PASSWORD,
  })
  assert.equal(invalid.status, 400)
  const login = await call('POST', `/v1/${slug}/auth/login`, { email, password: USER_PASSWORD })
  assert.equal(login.status, 200)
  const refreshed = await call('POST', `/v1/${slug}/auth/refresh`, {
    refreshToken: login.body.refreshToken,
  })
  assert.equal(refreshed.status, 200)
  const reused = await call('POST', `/v1/${slug}/auth/refresh`, {
    refreshToken: login.body.refreshToken,
  })
  assert.equal(reused.status, 401)
  const me = await call('GET', `/v1/${slug}/me`, undefined, signedUp.body.accessToken)
  assert.equal(me.status, 200)
  const changed = await call(
    'PATCH',
    `/v1/${slug}/me/password`,
    { currentPassword: USER_PASSWORD, newPassword: NEW_PASSWORD },
    signedUp.body.accessToken,
  )
  assert.equal(changed.status, 200)
  const refused = await call('GET', `/v1/${slug}/me`, undefined, `${signedUp.body.accessToken}x`)
  assert.equal(refused.status, 401)
  const out = await call('POST', `/v1/${slug}/auth/logout`, {
    refreshToken: signedUp.body.refreshToken,
  })
  assert.equal(out.status, 200)
  const all = await call('POST', `/v1/${slug}/auth/logout-all`, undefined, created.body.accessToken)
  assert.equal(all.status, 200)

  await stopServer() // so the log is read whole, the shutdown lines included
  // The logs are there and structured (the check below is not vacuous).
  const lines = output.split('\n').filter((l) => l.trim().startsWith('{'))
  assert.ok(lines.length > 10, `structured log lines:\n${output.slice(0, 2000)}`)
  for (const line of lines) JSON.parse(line)
  assert.ok(output.includes('/auth/login'), 'requests are logged')

  const secrets = [
    ADMIN_PASSWORD,
    USER_PASSWORD,
    WRONG_PASSWORD,
    NEW_PASSWORD,
    created.body.accessToken,
    created.body.refreshToken,
    signedUp.body.accessToken,
    signedUp.body.refreshToken,
    login.body.accessToken,
    login.body.refreshToken,
    refreshed.body.accessToken,
    refreshed.body.refreshToken,
  ]
  for (const secret of secrets) {
    assert.ok(!output.includes(secret), `a secret reached the log: ${secret.slice(0, 12)}…`)
    // Not even the signature half of a token.
    const tail = secret.split('.').at(-1) ?? secret
    assert.ok(!output.includes(tail), 'part of a secret reached the log')
  }
  assert.doesNotMatch(output, /authorization":\s*"Bearer/i)
})
