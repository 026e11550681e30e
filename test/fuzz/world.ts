// The fuzz suite's fixtures: two tenants with real credentials and ids, so generated
// requests can reach past authentication and validation. Generated requests name these
// values symbolically (`Ref`), and each is read at send time: a request that succeeds may
// spend a refresh token, revoke a key or delete a user, and `heal` then puts a working
// fixture back, so the operations fuzzed later still meet valid credentials.
import { randomUUID } from 'node:crypto'
import * as fc from 'fast-check'
import { type SQL, sql } from '../../src/db/orm.ts'
import { hashToken } from '../../src/lib/crypto.ts'
import { normalizeEmail } from '../../src/lib/email.ts'
import { createTenant, STRONG_PASSWORD, signup, type TestServer, uniqueEmail } from '../helpers.ts'
import type { OidcProviderFixture } from '../oidc-provider.ts'

/** A fixture value named in a generated request, resolved when the request is sent. */
export class Ref {
  readonly key: RefKey
  /** Text put around the value (a NUL after a valid email, say). */
  readonly before: string
  readonly after: string
  constructor(key: RefKey, before = '', after = '') {
    this.key = key
    this.before = before
    this.after = after
  }
  [fc.toStringMethod](): string {
    const before = this.before ? `${fc.stringify(this.before)}+` : ''
    const after = this.after ? `+${fc.stringify(this.after)}` : ''
    return `${before}<${this.key}>${after}`
  }
}

export const ref = (key: RefKey) => new Ref(key)

interface Principal {
  email: string
  id: string
  role: 'Admin' | 'Member'
  passwordHash: string
  access: string
  refresh: string
  sessionId: string
}

interface TenantFixture {
  slug: string
  id: string
  admin: Principal
  member: Principal
  apiKey: { id: string; plaintext: string }
  invite: { id: string; token: string; email: string }
  settings: Record<string, unknown>
}

const REF_KEYS = [
  'slug',
  'otherSlug',
  'adminEmail',
  'memberEmail',
  'otherEmail',
  'inviteEmail',
  'password',
  'adminRefresh',
  'memberRefresh',
  'otherRefresh',
  'inviteToken',
  'otherInviteToken',
  'adminId',
  'memberId',
  'otherUserId',
  'apiKeyId',
  'otherApiKeyId',
  'inviteId',
  'otherInviteId',
  'adminToken',
  'memberToken',
  'otherToken',
  'apiKey',
  'otherApiKey',
  'expiredToken',
] as const
export type RefKey = (typeof REF_KEYS)[number]

// The tenant columns a success may change that would lock the fixtures out (a required
// second factor, passwordless only, IdP credentials gone); put back after every success.
const SETTINGS = [
  'mfa_policy',
  'auth_policy',
  'passwordless_jit_signup',
  'require_verified_email',
  'idp_oauth_enabled',
  'idp_client_id',
  'idp_client_secret_enc',
  'deleted_at',
]

export class World {
  readonly server: TestServer
  main!: TenantFixture
  other!: TenantFixture
  private expired = ''
  private loggedInAt = Date.now()

  constructor(server: TestServer) {
    this.server = server
  }

  static async create(server: TestServer, idp: OidcProviderFixture): Promise<World> {
    const world = new World(server)
    // The main tenant takes emailed codes and optional MFA, so those routes get past their
    // policy checks; the other keeps the defaults (passwords only, MFA disabled).
    // Both are clients of the IdP, so its start and callback routes get past their checks.
    world.main = await world.tenant(idp, {
      authPolicy: 'PasswordAndPasswordless',
      mfaPolicy: 'Optional',
    })
    world.other = await world.tenant(idp, {})
    const { admin } = world.main
    // Signed with the server's key and otherwise valid, but an hour past its expiry.
    world.expired = server.deps.tokens.issue(
      { sub: admin.id, tid: world.main.id, role: 'Admin', sid: admin.sessionId, jti: randomUUID() },
      new Date(Date.now() - 3_600_000),
    )
    return world
  }

  /** The ids of the tenants whose rows a refused request must leave alone. */
  tenantIds(): string[] {
    return [this.main.id, this.other.id]
  }

  value(key: RefKey): string {
    const { main, other } = this
    const values: Record<RefKey, string> = {
      slug: main.slug,
      otherSlug: other.slug,
      adminEmail: main.admin.email,
      memberEmail: main.member.email,
      otherEmail: other.admin.email,
      inviteEmail: main.invite.email,
      password: STRONG_PASSWORD,
      adminRefresh: main.admin.refresh,
      memberRefresh: main.member.refresh,
      otherRefresh: other.admin.refresh,
      inviteToken: main.invite.token,
      otherInviteToken: other.invite.token,
      adminId: main.admin.id,
      memberId: main.member.id,
      otherUserId: other.admin.id,
      apiKeyId: main.apiKey.id,
      otherApiKeyId: other.apiKey.id,
      inviteId: main.invite.id,
      otherInviteId: other.invite.id,
      adminToken: main.admin.access,
      memberToken: main.member.access,
      otherToken: other.admin.access,
      apiKey: main.apiKey.plaintext,
      otherApiKey: other.apiKey.plaintext,
      expiredToken: this.expired,
    }
    return values[key]
  }

  /** `value` with every Ref inside replaced by what it names now. */
  resolve(value: unknown): unknown {
    if (value instanceof Ref) return value.before + this.value(value.key) + value.after
    if (Array.isArray(value)) return value.map((v) => this.resolve(v))
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) {
        Object.defineProperty(out, k, { value: this.resolve(v), enumerable: true, writable: true })
      }
      return out
    }
    return value
  }

  /**
   * A long run (npm run fuzz) outlives the 15-minute access tokens: the server's clock is
   * kept at the real time, and every ten minutes the fixtures sign in again. Returns
   * whether that changed the database.
   */
  async freshen(): Promise<boolean> {
    const lag = Date.now() - this.server.clock.now().getTime()
    if (lag > 1000) this.server.clock.advance(lag / 1000)
    if (Date.now() - this.loggedInAt < 600_000) return false
    for (const t of [this.main, this.other]) {
      for (const p of [t.admin, t.member]) Object.assign(p, await this.login(t.slug, p.email))
    }
    this.loggedInAt = Date.now()
    return true
  }

  async tenantExists(slug: string): Promise<boolean> {
    if (slug.includes('\u0000') || !slug.isWellFormed()) return false // PostgreSQL could not store it
    return (await this.rows(sql`SELECT 1 FROM tenants WHERE slug = ${slug}`)).length > 0
  }

  /**
   * After a request succeeded: every fixture still works. Tenant settings, users, sessions,
   * the API key and the invite are checked in the database and repaired or replaced.
   */
  async heal(): Promise<void> {
    for (const t of [this.main, this.other]) {
      await this.healSettings(t)
      for (const p of [t.admin, t.member]) await this.healPrincipal(t, p)
      const [key] = await this.rows(sql`
        SELECT revoked_at FROM api_keys WHERE tenant_id = ${t.id} AND id = ${t.apiKey.id}`)
      if (!key || key.revoked_at) t.apiKey = await this.apiKey(t.slug, t.admin.access)
      const [invite] = await this.rows(sql`
        SELECT accepted_at, revoked_at FROM invites WHERE tenant_id = ${t.id} AND id = ${t.invite.id}`)
      if (!invite || invite.accepted_at || invite.revoked_at) {
        t.invite = await this.invite(t.slug, t.admin.access)
      }
    }
  }

  private async healSettings(t: TenantFixture): Promise<void> {
    const [row] = await this.rows(sql`SELECT * FROM tenants WHERE id = ${t.id}`)
    if (SETTINGS.every((c) => String(row[c]) === String(t.settings[c]))) return
    const s = t.settings
    await this.server.deps.db.execute(sql`
      UPDATE tenants SET mfa_policy = ${s.mfa_policy}, auth_policy = ${s.auth_policy},
        passwordless_jit_signup = ${s.passwordless_jit_signup},
        require_verified_email = ${s.require_verified_email},
        idp_oauth_enabled = ${s.idp_oauth_enabled}, idp_client_id = ${s.idp_client_id},
        idp_client_secret_enc = ${s.idp_client_secret_enc}, deleted_at = NULL
      WHERE id = ${t.id}`)
    this.server.deps.tenants.forget(t.slug)
  }

  private async healPrincipal(t: TenantFixture, p: Principal): Promise<void> {
    const db = this.server.deps.db
    const [user] = await this.rows(sql`
      SELECT deleted_at, status, role, password_hash, totp_enabled
      FROM users WHERE tenant_id = ${t.id} AND id = ${p.id}`)
    if (!user) {
      // Erased (POST users/{userId}/erase): the row comes back as it was made, deleted, so
      // that the repair below frees its address and revives it.
      await db.execute(sql`
        INSERT INTO users (tenant_id, id, email, email_normalized, password_hash, status, role,
          created_at, updated_at, deleted_at)
        VALUES (${t.id}, ${p.id}, ${p.email}, ${normalizeEmail(p.email)}, ${p.passwordHash},
          'Active', ${p.role}, now(), now(), now())`)
    }
    const userBroken =
      !user ||
      user.deleted_at !== null ||
      user.status !== 'Active' ||
      user.role !== p.role ||
      user.password_hash !== p.passwordHash ||
      user.totp_enabled !== false
    if (userBroken) {
      // A deleted fixture's address may have been signed up again: that account goes.
      await db.execute(sql`
        UPDATE users SET deleted_at = now()
        WHERE tenant_id = ${t.id} AND id <> ${p.id} AND deleted_at IS NULL
          AND email_normalized = (SELECT email_normalized FROM users
                                  WHERE tenant_id = ${t.id} AND id = ${p.id})`)
      await db.execute(sql`
        UPDATE users SET deleted_at = NULL, status = 'Active', role = ${p.role},
          password_hash = ${p.passwordHash}, totp_enabled = false, totp_secret_enc = NULL
        WHERE tenant_id = ${t.id} AND id = ${p.id}`)
    }
    const [session] = await this.rows(sql`
      SELECT s.revoked_at, r.used_at FROM sessions s
      LEFT JOIN refresh_tokens r ON r.tenant_id = s.tenant_id AND r.token_hash = ${hashToken(p.refresh)}
      WHERE s.tenant_id = ${t.id} AND s.id = ${p.sessionId}`)
    if (userBroken || !session || session.revoked_at || session.used_at) {
      Object.assign(p, await this.login(t.slug, p.email))
    }
  }

  private async tenant(
    idp: OidcProviderFixture,
    policies: Record<string, string>,
  ): Promise<TenantFixture> {
    const t = await createTenant(this.server)
    const admin = this.principal(t.adminEmail, 'Admin', t.admin)
    const token = admin.access
    const client = await idp.addClient(
      `${this.server.deps.config.publicUrl}/v1/${t.slug}/oauth/idp/callback`,
    )
    for (const [method, path, body] of [
      ['PUT', 'oauth/idp/credentials', client],
      ['PATCH', 'tenant', policies],
    ] as const) {
      const res = await this.server.request(method, `/v1/${t.slug}/${path}`, body, { token })
      if (res.status !== 200) throw new Error(`fixture ${path}: ${JSON.stringify(res.body)}`)
    }
    const joined = await signup(this.server, t.slug)
    const member = this.principal(joined.email, 'Member', joined)
    for (const p of [admin, member]) {
      const [row] = await this.rows(sql`
        SELECT password_hash FROM users WHERE tenant_id = ${t.tenantId} AND id = ${p.id}`)
      p.passwordHash = row.password_hash as string
    }
    const [settings] = await this.rows(sql`SELECT * FROM tenants WHERE id = ${t.tenantId}`)
    return {
      slug: t.slug,
      id: t.tenantId,
      admin,
      member,
      apiKey: await this.apiKey(t.slug, admin.access),
      invite: await this.invite(t.slug, admin.access),
      settings,
    }
  }

  private principal(email: string, role: Principal['role'], envelope: any): Principal {
    return { email, role, passwordHash: '', ...tokens(envelope) }
  }

  private async login(slug: string, email: string) {
    const res = await this.server.request('POST', `/v1/${slug}/auth/login`, {
      email,
      password: STRONG_PASSWORD,
    })
    if (res.status !== 200) throw new Error(`fixture login failed: ${JSON.stringify(res.body)}`)
    return tokens(res.body)
  }

  private async apiKey(slug: string, token: string) {
    const res = await this.server.request(
      'POST',
      `/v1/${slug}/api-keys`,
      { name: 'fuzz', environment: 'live' },
      { token },
    )
    if (res.status !== 200) throw new Error(`fixture key failed: ${JSON.stringify(res.body)}`)
    return { id: res.body.apiKey.id as string, plaintext: res.body.plaintext as string }
  }

  private async invite(slug: string, token: string) {
    const email = uniqueEmail('invitee')
    const res = await this.server.request(
      'POST',
      `/v1/${slug}/invites`,
      { email, sendEmail: false },
      { token },
    )
    if (res.status !== 200) throw new Error(`fixture invite failed: ${JSON.stringify(res.body)}`)
    return { id: res.body.invite.id as string, token: res.body.token as string, email }
  }

  private async rows(query: SQL): Promise<Record<string, unknown>[]> {
    const result = (await this.server.deps.db.execute(query)) as unknown as {
      rows: Record<string, unknown>[]
    }
    return result.rows
  }
}

/** The parts of a token envelope the fixtures keep, and the session id inside the JWT. */
function tokens(envelope: any) {
  const claims = JSON.parse(Buffer.from(envelope.accessToken.split('.')[1], 'base64url').toString())
  return {
    id: envelope.user.id as string,
    access: envelope.accessToken as string,
    refresh: envelope.refreshToken as string,
    sessionId: claims.sid as string,
  }
}
