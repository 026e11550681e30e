// HTTP for the fault scenarios: fetch() to 127.0.0.1 only, every call timed and never
// throwing (a refused or reset connection is status 0 with its error code), plus the few
// API calls the scenarios seed their data with, and the one-line figures they print.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'

export const PASSWORD = 'violet-harbor-lantern-42'

/** Short mode by default (CI); FAULTS_LONG=1 runs heavier and longer loads. */
export const LONG = process.env.FAULTS_LONG === '1'

// `npm test` runs every .test.ts file under test/, these included: there they skip
// themselves, and only scripts/faults.ts (npm run test:faults), which sets FAULT_SUITE=1,
// runs them.
export const SKIP = process.env.FAULT_SUITE === '1' ? false : 'fault injection: npm run test:faults'

export interface Reply {
  /** 0: no HTTP answer (refused, reset, timed out). */
  status: number
  body: any
  headers: Headers | undefined
  /** The network error's code when status is 0. */
  error?: string
  startedAt: number
  ms: number
}

export interface CallOptions {
  body?: unknown
  token?: string
  /** Sent as X-Forwarded-For (TRUST_PROXY=true): each simulated client has its own address. */
  ip?: string
  timeoutMs?: number
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  if (!base.startsWith('http://127.0.0.1:')) throw new Error(`not a local address: ${base}`)
  const headers: Record<string, string> = {}
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.ip) headers['x-forwarded-for'] = options.ip
  const startedAt = performance.now()
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 40_000),
    })
    const text = await res.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {}
    return { status: res.status, body, headers: res.headers, startedAt, ms: elapsed(startedAt) }
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause
    const code = cause?.code ?? (error as Error).name ?? 'error'
    return {
      status: 0,
      body: undefined,
      headers: undefined,
      error: code,
      startedAt,
      ms: elapsed(startedAt),
    }
  }
}

const elapsed = (since: number) => performance.now() - since

/** A call that tries again (3 times) when the connection itself fails, for checks. */
export async function callSure(base: string, method: string, path: string, options?: CallOptions) {
  let reply = await call(base, method, path, options)
  for (let i = 0; i < 3 && reply.status === 0; i++) {
    await new Promise((r) => setTimeout(r, 200))
    reply = await call(base, method, path, options)
  }
  return reply
}

export function randomIp(): string {
  const [a, b, c] = randomBytes(3)
  return `10.${a}.${b}.${c}`
}

export function uniqueEmail(prefix = 'f'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}@example.com`
}

export function expectStatus(reply: Reply, status: number, what: string): void {
  assert.equal(
    reply.status,
    status,
    `${what}: ${reply.status} ${reply.error ?? JSON.stringify(reply.body)}`,
  )
}

export interface Tenant {
  slug: string
  tenantId: string
  adminId: string
  adminToken: string
}

export async function createTenant(base: string): Promise<Tenant> {
  const slug = `faults-${randomBytes(5).toString('hex')}`
  const res = await callSure(base, 'POST', '/v1/tenants', {
    ip: randomIp(),
    body: {
      tenant: { slug, name: 'Faults' },
      admin: { email: uniqueEmail('admin'), password: PASSWORD },
    },
  })
  expectStatus(res, 200, 'tenant creation')
  return {
    slug,
    tenantId: res.body.user.tenantId,
    adminId: res.body.user.id,
    adminToken: res.body.accessToken,
  }
}

export interface Session {
  userId: string
  email: string
  accessToken: string
  refreshToken: string
}

export function sessionOf(reply: Reply, email: string): Session {
  return {
    userId: reply.body.user.id,
    email,
    accessToken: reply.body.accessToken,
    refreshToken: reply.body.refreshToken,
  }
}

export async function signup(base: string, slug: string, ip = randomIp()): Promise<Session> {
  const email = uniqueEmail()
  const res = await callSure(base, 'POST', `/v1/${slug}/auth/signup`, {
    ip,
    body: { email, password: PASSWORD },
  })
  expectStatus(res, 200, 'signup')
  return sessionOf(res, email)
}

/** Runs `fn` over `items`, `width` at a time (seeding without a thundering herd). */
export async function inBatches<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>) {
  const out: R[] = []
  for (let i = 0; i < items.length; i += width) {
    out.push(...(await Promise.all(items.slice(i, i + width).map(fn))))
  }
  return out
}

/** The line that goes into the release note: `faults: <scenario>: <figures>`. */
export function report(scenario: string, figures: Record<string, string | number>): void {
  const parts = Object.entries(figures).map(([k, v]) => `${k} ${v}`)
  console.log(`faults: ${scenario}: ${parts.join(', ')}`)
}

export const ms = (n: number) => `${Math.round(n)} ms`
