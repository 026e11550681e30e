// npm run image:check [-- --no-build]: builds the image (npm run image) and runs it as an
// operator would (CONTRACT §23), printing how long each part took.
//   1. As the Quick start: `podman run -p …:3000` with a named volume on /data. /ready, the
//      healthcheck, the landing page and the console, a tenant, a login; SIGTERM drains
//      and exits 0; a new container on the same volume still has the tenant, the login
//      still works, and the access token from before still opens /me (the development
//      secrets were kept in /data).
//   2. In production mode, when IMAGE_CHECK_DATABASE_URL and IMAGE_CHECK_REDIS_URL are set
//      (CI sets them): NODE_ENV=production with its secrets, PostgreSQL and Redis, on a
//      read-only root file system; /ready sees both, a tenant, a login.
// Nothing of the machine's is touched beyond what those two URLs name; every container and
// volume it makes is removed at the end, failed or not.
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { capture, IMAGE, podmanArgs, podmanOk, run } from './container.ts'
import { buildImage } from './image.ts'

const tag = `tenant-auth-check-${process.pid}`
const made: { containers: string[]; volumes: string[] } = { containers: [], volumes: [] }
const timings: string[] = []

async function timed<T>(label: string, work: () => Promise<T> | T): Promise<T> {
  const started = performance.now()
  const result = await work()
  timings.push(`${label}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return result
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Starts a container detached; answers its name. */
function start(name: string, args: string[]): string {
  made.containers.push(name)
  run('podman', podmanArgs('run', ['-d', '--name', name, ...args, IMAGE]))
  return name
}

async function waitReady(base: string, name: string, seconds = 180): Promise<unknown> {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${base}/ready`)
      if (res.status === 200) return await res.json()
    } catch {
      // Not listening yet.
    }
    if (!podmanOk('container', ['exists', name]) || !running(name)) break
    await new Promise((r) => setTimeout(r, 500))
  }
  run('podman', ['logs', '--tail', '40', name])
  throw new Error(`${name}: not ready within ${seconds} s`)
}

function running(name: string): boolean {
  return capture('podman', ['inspect', '--format', '{{.State.Running}}', name]) === 'true'
}

async function call(base: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) }
}

function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(`image check: ${what}`)
  console.log(`ok - ${what}`)
}

const ADMIN = { email: 'ada@image-check.test', password: 'correct horse battery staple' }

async function tenantAndLogin(base: string, slug: string): Promise<string> {
  const created = await call(base, '/v1/tenants', {
    tenant: { slug, name: 'Image check' },
    admin: ADMIN,
  })
  expect(
    created.status === 200,
    `POST /v1/tenants answers 200 (${created.status} ${created.text.slice(0, 200)})`,
  )
  return login(base, slug)
}

async function login(base: string, slug: string): Promise<string> {
  const res = await call(base, `/v1/${slug}/auth/login`, ADMIN)
  expect(res.status === 200, `the admin signs in to ${slug} (${res.status})`)
  return res.json().accessToken as string
}

/** podman stop sends the image's STOPSIGNAL (SIGTERM): the service drains and exits 0. */
function stopGracefully(name: string): void {
  run('podman', ['stop', '--time', '30', name])
  const code = capture('podman', ['inspect', '--format', '{{.State.ExitCode}}', name])
  expect(code === '0', `${name} exits 0 on SIGTERM (exit ${code})`)
}

async function quickStart(): Promise<void> {
  const volume = `${tag}-data`
  made.volumes.push(volume)
  run('podman', ['volume', 'create', volume])
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const first = start(`${tag}-1`, ['-p', `127.0.0.1:${port}:3000`, '-v', `${volume}:/data`])
  await timed('first start (generates the development keys, creates the database)', () =>
    waitReady(base, first),
  )
  expect(podmanOk('healthcheck', ['run', first]), 'the HEALTHCHECK passes')
  const uid = capture('podman', ['exec', first, 'id', '-u'])
  expect(uid === '10001', `the service runs as uid 10001, not root (${uid})`)
  expect((await call(base, '/')).status === 200, 'the landing page answers 200')
  const consolePage = await call(base, '/console/')
  expect(consolePage.status === 200 && consolePage.text.includes('<'), 'the console is built in')
  const token = await tenantAndLogin(base, 'image-check')
  stopGracefully(first)

  const second = start(`${tag}-2`, ['-p', `127.0.0.1:${port}:3000`, '-v', `${volume}:/data`])
  await timed('start of a new container on the same /data', () => waitReady(base, second))
  await login(base, 'image-check')
  const me = await call(base, '/v1/image-check/me', undefined, token)
  expect(me.status === 200, `the access token from before the restart opens /me (${me.status})`)
  stopGracefully(second)
}

async function production(databaseUrl: string, redisUrl: string): Promise<void> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  // The secrets go in a file podman reads, not on its command line.
  const dir = mkdtempSync(join(tmpdir(), 'image-check-'))
  const envFile = join(dir, 'env')
  const secrets = {
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: base,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ENCRYPTION_KEYS: `v1:${randomBytes(32).toString('base64')}`,
    SMTP_URL: 'smtp://127.0.0.1:2',
  }
  writeFileSync(
    envFile,
    Object.entries(secrets)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  )
  chmodSync(envFile, 0o600)
  try {
    const name = start(`${tag}-production`, [
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--env-file',
      envFile,
    ])
    const ready = (await timed('production start (PostgreSQL, Redis, migrations)', () =>
      waitReady(base, name),
    )) as { checks: Record<string, string> }
    expect(
      ready.checks.database === 'ok' && ready.checks.redis === 'ok',
      `/ready sees PostgreSQL and Redis (${JSON.stringify(ready.checks)})`,
    )
    await tenantAndLogin(base, `image-check-${process.pid}`)
    stopGracefully(name)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function cleanUp(): void {
  for (const name of made.containers) podmanOk('rm', ['--force', '--volumes', name])
  for (const volume of made.volumes) podmanOk('volume', ['rm', '--force', volume])
}

try {
  if (!process.argv.includes('--no-build')) {
    const bytes = await timed('npm run image', () => buildImage())
    console.log(`image: ${(bytes / 1e6).toFixed(1)} MB`)
  }
  await quickStart()
  const { IMAGE_CHECK_DATABASE_URL: db, IMAGE_CHECK_REDIS_URL: redis } = process.env
  if (db && redis) await production(db, redis)
  else
    console.log('skip - production mode (set IMAGE_CHECK_DATABASE_URL and IMAGE_CHECK_REDIS_URL)')
} finally {
  cleanUp()
  console.log(timings.join('\n'))
}
