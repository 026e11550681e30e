// Test harness: the real app on a real socket, driven over HTTP with fetch, against the
// database chosen by DATABASE_URL (unset: a fresh embedded PGlite per test file) and,
// with REDIS_URL, real Redis. Only the clock may be faked.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SuiteContext, TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { type BuildOptions, buildApp } from '../src/app.ts'
import { type Config, DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'
import type { Deps } from '../src/deps.ts'
import { ManualClock } from '../src/lib/clock.ts'
import { DEFAULT_LIMITS, type Limits } from '../src/lib/limits.ts'
import { defaultHashConcurrency } from '../src/lib/passwords.ts'
import { databaseFromTemplate } from './pglite-template.ts'

export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0001'

/**
 * The OpenID provider's signing keys (CONTRACT §11): an RSA key (RS256) and an EC P-256
 * key (ES256), generated once per test process.
 */
export const TEST_OIDC_KEYS = [
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
].map((k) => k.export({ type: 'pkcs8', format: 'pem' }).toString())

/** Budgets large enough that ordinary tests never meet them; limit tests set their own. */
export const GENEROUS_LIMITS: Limits = Object.fromEntries(
  Object.entries(DEFAULT_LIMITS).map(([k, v]) => [k, { points: 100_000, seconds: v.seconds }]),
) as unknown as Limits

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    publicUrl: 'http://auth.test',
    databaseUrl: process.env.DATABASE_URL || 'memory://',
    dataDir: '/tmp/tenant-auth-test',
    databasePoolMode: process.env.DATABASE_POOL_MODE === 'transaction' ? 'transaction' : 'session',
    redisUrl: process.env.REDIS_URL || undefined,
    databaseReadUrl: undefined,
    databaseReadMaxLagMs: 1000,
    redisSentinels: [],
    redisSentinelMaster: undefined,
    jwtSecret: TEST_JWT_SECRET,
    jwtPreviousSecrets: [],
    jwtAlg: 'HS256',
    jwtPrivateKeys: [],
    encryptionKeys: [{ version: 'v1', key: Buffer.alloc(32, 7) }],
    oidcSigningKeys: TEST_OIDC_KEYS,
    oidcBackchannelAllowLoopback: false,
    pwnedPasswordsUrl: undefined,
    captchaVerifyUrls: {},
    webhookAllowPrivate: false,
    socialProviderEndpoints: {},
    webhookRetrySchedule: DEFAULT_WEBHOOK_RETRY_SCHEDULE,
    webhookWorker: false,
    smtpUrl: undefined,
    mailFrom: 'auth@test.local',
    idp: undefined,
    trustProxy: true,
    tenantCreationToken: undefined,
    metricsToken: undefined,
    production: false,
    logLevel: 'silent',
    limits: GENEROUS_LIMITS,
    userRetentionDays: 30,
    revocationPollMs: 200,
    hashConcurrency: defaultHashConcurrency({}),
    hashQueueLimit: 16 * defaultHashConcurrency({}),
    ...overrides,
  }
}

export interface Response<T = any> {
  status: number
  body: T
  headers: Headers
}

export interface RequestOptions {
  token?: string
  /** Sent as X-Forwarded-For, so each test can be its own client (TRUST_PROXY is on). */
  ip?: string
  headers?: Record<string, string>
  /** A raw body, sent as is (malformed JSON, wrong content types). */
  raw?: string
}

export interface TestServer {
  app: FastifyInstance
  deps: Deps
  clock: ManualClock
  url: string
  request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<Response<T>>
  close(): Promise<void>
}

export async function startServer(
  overrides: Partial<Config> = {},
  options: Pick<BuildOptions, 'timeouts'> = {},
): Promise<TestServer> {
  const config = testConfig(overrides)
  const clock = new ManualClock()
  const database = config.databaseUrl === 'memory://' ? await databaseFromTemplate() : undefined
  const { app, deps } = await buildApp(config, {
    clock,
    logger: false,
    database,
    purgeTimer: false,
    webhookWorker: false,
    ...options,
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return {
    app,
    deps,
    clock,
    url,
    request: (method, path, body, options) => send(url, method, path, body, options),
    close: async () => {
      await app.close()
      // A database handed to the app is the caller's to close.
      await database?.close()
    },
  }
}

/**
 * A test server that closes itself when `t` ends (fastify/demo's `build(t)`): the context
 * of a test, or of a file-level `before` (the root test: after the file's last test).
 * A `describe`'s hooks get a suite context, which cannot clean up after itself.
 */
export async function startTestServer(
  t: TestContext | SuiteContext,
  overrides: Partial<Config> = {},
  options: Pick<BuildOptions, 'timeouts'> = {},
): Promise<TestServer> {
  if (!('after' in t)) throw new Error('startTestServer needs a test context, not a suite')
  const server = await startServer(overrides, options)
  t.after(() => server.close())
  return server
}

/** A second instance on the same database (and Redis), as in a multi-instance deployment. */
export async function startSecondInstance(first: TestServer, overrides: Partial<Config> = {}) {
  const config = testConfig({ ...first.deps.config, ...overrides })
  const database =
    first.deps.database.kind === 'pglite'
      ? first.deps.database
      : await openDatabase(config.databaseUrl, config.dataDir, {
          poolMode: config.databasePoolMode,
        })
  const { app, deps } = await buildApp(config, {
    clock: first.clock, // one time for both, as the instances of a deployment share one
    database,
    migrate: false,
    logger: false,
    purgeTimer: false,
    webhookWorker: false,
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return {
    app,
    deps,
    url,
    request: <T = any>(method: string, path: string, body?: unknown, options?: RequestOptions) =>
      send<T>(url, method, path, body, options),
    close: async () => {
      await app.close()
      if (database !== first.deps.database) await database.close()
    },
  }
}

/** Requests to any running service (a spawned process), as TestServer.request sends them. */
export function httpClient(base: string): { request: TestServer['request'] } {
  return {
    request: <T = any>(method: string, path: string, body?: unknown, options?: RequestOptions) =>
      send<T>(base, method, path, body, options),
  }
}

async function send<T>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  options: RequestOptions = {},
): Promise<Response<T>> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  headers['x-forwarded-for'] ??= options.ip ?? randomIp()
  let payload: string | undefined
  if (options.raw !== undefined) payload = options.raw
  else if (body !== undefined) payload = JSON.stringify(body)
  if (payload !== undefined && !headers['content-type'])
    headers['content-type'] = 'application/json'
  const res = await fetch(base + path, { method, headers, body: payload })
  const text = await res.text()
  let parsed: unknown = text
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text)
  return { status: res.status, body: parsed as T, headers: res.headers }
}

export function randomIp(): string {
  const b = randomBytes(3)
  return `10.${b[0]}.${b[1]}.${b[2] || 1}`
}

export function uniqueSlug(prefix = 't'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}@example.com`
}

export const STRONG_PASSWORD = 'plum-orbit-canvas-77'

export interface TenantFixture {
  slug: string
  tenantId: string
  adminEmail: string
  adminPassword: string
  admin: any
}

export async function createTenant(
  server: TestServer | { request: TestServer['request'] },
  options: { slug?: string; name?: string } = {},
): Promise<TenantFixture> {
  const slug = options.slug ?? uniqueSlug()
  const adminEmail = uniqueEmail('admin')
  const res = await server.request('POST', '/v1/tenants', {
    tenant: { slug, name: options.name ?? `Tenant ${slug}` },
    admin: { email: adminEmail, password: STRONG_PASSWORD },
  })
  if (res.status !== 200) throw new Error(`tenant creation failed: ${JSON.stringify(res.body)}`)
  return {
    slug,
    tenantId: res.body.user.tenantId,
    adminEmail,
    adminPassword: STRONG_PASSWORD,
    admin: res.body,
  }
}

export async function signup(
  server: { request: TestServer['request'] },
  slug: string,
  email = uniqueEmail(),
  password = STRONG_PASSWORD,
) {
  const res = await server.request('POST', `/v1/${slug}/auth/signup`, { email, password })
  if (res.status !== 200) throw new Error(`signup failed: ${JSON.stringify(res.body)}`)
  return { email, password, ...res.body }
}

/** Waits until `check` passes or `ms` elapse (for cross-instance propagation). */
export async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return check()
}

/** The audit actions recorded for a tenant, oldest first. */
export async function auditActions(server: { deps: Deps }, tenantId: string): Promise<string[]> {
  const { auditEvents } = await import('../src/db/schema.ts')
  const { asc, eq } = await import('../src/db/orm.ts')
  const rows = await server.deps.db
    .select({ action: auditEvents.action })
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
    .orderBy(asc(auditEvents.createdAt), asc(auditEvents.id))
  return rows.map((r) => r.action)
}

const tempDirs: string[] = []
process.on('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

/** A temporary folder removed when the test process exits. */
export function tempDir(prefix = 'auth-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.push(dir)
  return dir
}

/**
 * One request written as raw bytes on a socket (what fetch refuses to send); the answer,
 * once the server closes the connection. The socket is not ended first: Node would abort
 * a request whose client half-closed. A well-formed request must say `Connection: close`.
 */
export function rawRequest(
  url: string,
  request: string,
  encoding: BufferEncoding = 'utf8',
): Promise<string> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    let answer = ''
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(Buffer.from(request, encoding)),
    )
    socket.on('data', (d) => {
      answer += d.toString('utf8')
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

/** Every (method, path) the server routes, read from Fastify's own route tree. */
export function registeredRoutes(app: FastifyInstance): { method: string; path: string }[] {
  const tree = app.printRoutes({ commonPrefix: false })
  const stack: string[] = []
  const routes: { method: string; path: string }[] = []
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    const depth = match[1].length / 4
    stack.length = depth
    stack.push(match[2])
    const path = stack.join('')
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) {
      routes.push({ method, path })
    }
  }
  return routes
}
