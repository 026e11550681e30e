// Shared by the passwordless and mfa test files: reading the database behind the API
// (to prove what a request changed, or that it changed nothing), mailed codes from the
// SMTP sink, and TOTP codes computed from a returned secret with the server's clock.
import assert from 'node:assert/strict'
import { and, asc, eq } from 'drizzle-orm'
import { Secret, TOTP } from 'otpauth'
import {
  createTenant,
  type Response,
  STRONG_PASSWORD,
  signup,
  type TestServer,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import {
  auditEvents,
  oneTimeCodes,
  refreshTokens,
  sessions,
  tenants,
  users,
} from '../../db/schema.ts'
import { normalizeEmail } from '../../lib/email.ts'

export const CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  429: 'TOO_MANY_REQUESTS',
}

/** The error envelope of CONTRACT §3 with this status and reason, and nothing else. */
export function expectError(res: Response, status: number, reason: string): void {
  const where = JSON.stringify(res.body)
  assert.equal(res.status, status, where)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, where)
  assert.deepEqual(
    Object.keys(res.body)
      .filter((k) => k !== 'details')
      .sort(),
    ['code', 'message'],
    where,
  )
  assert.equal(res.body.code, CODES[status], where)
  assert.equal(typeof res.body.message, 'string', where)
  assert.ok(res.body.message.length > 0, where)
  assert.equal(res.body.details?.reason, reason, where)
  if (status === 429) assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After')
}

export type Policy = Partial<
  Pick<typeof tenants.$inferInsert, 'authPolicy' | 'mfaPolicy' | 'passwordlessJitSignup' | 'name'>
>

/** Changes a tenant as an admin's PATCH would; this instance's tenant cache forgets it. */
export async function setTenant(server: TestServer, slug: string, changes: Policy) {
  if (Object.keys(changes).length === 0) return
  await server.deps.db.update(tenants).set(changes).where(eq(tenants.slug, slug))
  server.deps.tenants.forget(slug)
}

/** A tenant with the given policies (the admin signs up first, with a password). */
export async function tenantWith(server: TestServer, policy: Policy) {
  const t = await createTenant(server)
  await setTenant(server, t.slug, policy)
  return t
}

/** A member with a password, signed up while passwords are allowed. */
export async function member(server: TestServer, slug: string) {
  const tenant = (await server.deps.db.select().from(tenants).where(eq(tenants.slug, slug)))[0]
  const before = tenant.authPolicy
  if (before === 'PasswordlessOnly') await setTenant(server, slug, { authPolicy: 'PasswordOnly' })
  const user = await signup(server, slug)
  if (before === 'PasswordlessOnly') await setTenant(server, slug, { authPolicy: before })
  return { ...user, password: STRONG_PASSWORD, id: user.user.id as string }
}

export async function userRow(server: TestServer, tenantId: string, email: string) {
  const rows = await server.deps.db
    .select()
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.emailNormalized, normalizeEmail(email))))
  return rows[0]
}

export async function setUser(
  server: TestServer,
  tenantId: string,
  userId: string,
  changes: Partial<typeof users.$inferInsert>,
) {
  await server.deps.db
    .update(users)
    .set(changes)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
}

export async function codeRows(server: TestServer, tenantId: string, userId?: string) {
  return server.deps.db
    .select()
    .from(oneTimeCodes)
    .where(
      and(
        eq(oneTimeCodes.tenantId, tenantId),
        userId ? eq(oneTimeCodes.userId, userId) : undefined,
      ),
    )
    .orderBy(asc(oneTimeCodes.createdAt), asc(oneTimeCodes.id))
}

/** Every row a tenant owns in the tables these features touch, in a stable order. */
export async function snapshot(server: TestServer, tenantId: string) {
  const db = server.deps.db
  return {
    tenant: await db.select().from(tenants).where(eq(tenants.id, tenantId)),
    users: await db.select().from(users).where(eq(users.tenantId, tenantId)).orderBy(asc(users.id)),
    codes: await codeRows(server, tenantId),
    sessions: await db
      .select()
      .from(sessions)
      .where(eq(sessions.tenantId, tenantId))
      .orderBy(asc(sessions.id)),
    tokens: await db
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.tenantId, tenantId))
      .orderBy(asc(refreshTokens.tokenHash)),
    audit: await db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.tenantId, tenantId))
      .orderBy(asc(auditEvents.id)),
  }
}

export async function auditRows(server: TestServer, tenantId: string) {
  return server.deps.db
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
    .orderBy(asc(auditEvents.createdAt), asc(auditEvents.id))
}

/** The ids of a tenant's audit events so far: pass it to `auditSince`. */
export async function auditMark(server: TestServer, tenantId: string): Promise<Set<string>> {
  return new Set((await auditRows(server, tenantId)).map((r) => r.id))
}

/**
 * The audit events recorded since `mark`, sorted by action (the test clock stands still,
 * so events of one request share a timestamp and their order means nothing).
 */
export async function auditSince(server: TestServer, tenantId: string, mark: Set<string>) {
  return (await auditRows(server, tenantId))
    .filter((r) => !mark.has(r.id))
    .sort((a, b) => a.action.localeCompare(b.action) || a.id.localeCompare(b.id))
}

export async function actionsSince(server: TestServer, tenantId: string, mark: Set<string>) {
  return (await auditSince(server, tenantId, mark)).map((r) => r.action)
}

/** Asks for a login code and reads it from the mail it produced. */
export async function mailedLoginCode(
  server: TestServer,
  sink: SmtpSink,
  slug: string,
  email: string,
  ip?: string,
): Promise<string> {
  await server.deps.mailer.drain() // an earlier mail to this address must not be read as this one
  const before = sink.to(email).length
  const res = await server.request('POST', `/v1/${slug}/auth/request-login-code`, { email }, { ip })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, { ok: true })
  return SmtpSink.code(await sink.waitFor(email, before + 1))
}

/** Asks for an email OTP (password first) and reads it from its mail. */
export async function mailedEmailOtp(
  server: TestServer,
  sink: SmtpSink,
  slug: string,
  email: string,
  password = STRONG_PASSWORD,
): Promise<string> {
  await server.deps.mailer.drain() // an earlier mail to this address must not be read as this one
  const before = sink.to(email).length
  const res = await server.request('POST', `/v1/${slug}/auth/request-email-otp`, {
    email,
    password,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return SmtpSink.code(await sink.waitFor(email, before + 1))
}

/** The TOTP code an authenticator shows at the server's time, `steps` periods away. */
export function totpAt(server: TestServer, secret: string, steps = 0): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    timestamp: server.clock.now().getTime() + steps * 30_000,
  })
}

/** A different 6-digit code than `code` (a guaranteed wrong guess). */
export function otherCode(code: string, n = 1): string {
  return String((Number(code) + n) % 1_000_000).padStart(6, '0')
}

/** Enrols TOTP for a signed-in user through mfa/totp/enroll and mfa/totp/verify. */
export async function enrolTotp(server: TestServer, slug: string, accessToken: string) {
  const begun = await server.request('POST', `/v1/${slug}/mfa/totp/enroll`, undefined, {
    token: accessToken,
  })
  assert.equal(begun.status, 200, JSON.stringify(begun.body))
  const secret = begun.body.secret as string
  const done = await server.request(
    'POST',
    `/v1/${slug}/mfa/totp/verify`,
    { code: totpAt(server, secret) },
    { token: accessToken },
  )
  assert.equal(done.status, 200, JSON.stringify(done.body))
  // The accepted step is spent: the next use must come from a later step.
  server.clock.advance(30)
  return secret
}

export { SmtpSink }
