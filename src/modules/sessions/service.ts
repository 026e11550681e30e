// Sessions (SPEC, Authentication; CONTRACT §4): issuing token envelopes, refresh-token
// rotation with reuse detection, logout, and revoking a user's sessions.
import type { Config } from '../../config.ts'
import { afterCommit } from '../../db/after-commit.ts'
import type { Db, Handle } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { ACCESS_TOKEN_TTL, type AccessTokens } from '../../lib/jwt.ts'
import type { Mailer } from '../../lib/mailer.ts'
import type { Actor, AuditEntry, AuditRecorder } from '../audit/recorder.ts'
import type { HookCache, HookCalls } from '../hooks/cache.ts'
import { askHook, customClaims, type HookMethod, type HookUser } from '../hooks/call.ts'
import type { HookEvent } from '../hooks/schemas.ts'
import { type SecurityAlert, sendSecurityAlert } from '../notifications/security.ts'
import { organizationClaims } from '../organizations/claims.ts'
import { joinByVerifiedDomain } from '../organizations/jit.ts'
import { userRoleNames } from '../roles/members.ts'
import { forgetUserDevices } from '../signin/remembered-devices.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById, type User } from '../users/reads.ts'
import { presentUser, type UserRecord } from '../users/record.ts'
import { DEVICE_MEMORY_DAYS, isNewDevice } from './devices.ts'
import * as store from './queries.ts'
import type { RevocationCache } from './revocations.ts'

export const REFRESH_TOKEN_TTL = 30 * 24 * 60 * 60

export interface TokenEnvelope {
  user: UserRecord
  accessToken: string
  refreshToken: string
  accessTokenExpiresIn: number
  refreshTokenExpiresIn: number
  /** CONTRACT §21: a remembered device's token, when the sign-in asked for one. */
  deviceToken?: string
}

export interface SessionServiceDeps {
  db: Db
  clock: Clock
  audit: AuditRecorder
  tokens: AccessTokens
  revocations: RevocationCache
  /** The security alerts of sign-ins (CONTRACT §9). */
  mailer: Mailer
  config: Config
  /** The tenant's blocking hooks (CONTRACT §21), called by `gate` and at every minting. */
  cipher: FieldCipher
  hooks: HookCache
  hookCalls: HookCalls
  /** Where a hook's dropped reserved claims are logged. */
  log?: { warn: (details: object, message: string) => void }
}

/** Sessions of one user of one tenant that ended in one committed transaction. */
export interface EndedSessions {
  tenantId: string
  userId: string
  sessionIds: string[]
}

/**
 * Told of sessions once their end committed (the OpenID provider's back-channel logout,
 * CONTRACT §11). Called synchronously and never awaited: a listener does its work in the
 * background and catches its own failures, so it can neither slow nor fail the request.
 */
export type SessionsEndedListener = (ended: EndedSessions[]) => void

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Ends every live session of a user inside a `revoking` transaction, one SessionRevoked
 * each (`keep` spares one); answers the ids ended.
 */
export type RevokeUserSessions = (
  tenantId: string,
  userId: string,
  actor: Actor,
  reason: string,
  keep?: string,
) => Promise<string[]>

export class SessionService {
  private readonly deps: SessionServiceDeps
  /** The transactions opened by `signingIn`: their alerts are mailed once they commit. */
  private readonly signingInTx = new WeakSet<Handle>()
  private readonly endListeners: SessionsEndedListener[] = []
  constructor(deps: SessionServiceDeps) {
    this.deps = deps
  }

  /** Adds a listener told of every session that ends, whatever ended it. */
  onSessionsEnded(listener: SessionsEndedListener): void {
    this.endListeners.push(listener)
  }

  /**
   * After the transaction that ended `ended` committed: the revocation cache refuses their
   * access tokens (CONTRACT §4), then the listeners hear of them.
   */
  private announce(ended: EndedSessions[]): void {
    const live = ended.filter((e) => e.sessionIds.length > 0)
    this.deps.revocations.add(live.flatMap((e) => e.sessionIds))
    if (live.length === 0) return
    for (const listener of this.endListeners) listener(live)
  }

  /**
   * Runs a sign-in's `work` in one transaction (which may end the user's other sessions
   * through `revoke`, heard by the revocation cache once it commits); then mails the security
   * alerts queued in it (`alertOnCommit`, and `start`'s new-device alert). A rolled-back
   * sign-in mails nothing. Paths whose session is the user's first (sign-up, tenant
   * creation, an invitation) open a plain transaction: no device check, no alert.
   */
  async signingIn<T>(work: (tx: Handle, revoke: RevokeUserSessions) => Promise<T>): Promise<T> {
    // A `revoking` transaction: a sign-in may end the sessions that existed (a reset).
    return this.revoking(async (tx, revoke) => {
      this.signingInTx.add(tx)
      return work(tx, revoke)
    })
  }

  /** Queues a security alert to mail when the `signingIn` transaction `tx` commits. */
  alertOnCommit(tx: Handle, tenant: Tenant, user: User, alert: SecurityAlert): void {
    if (!this.signingInTx.has(tx)) {
      throw new Error('alertOnCommit needs a transaction opened by signingIn')
    }
    afterCommit(tx, () => sendSecurityAlert(this.deps, tenant, user, alert))
  }

  /**
   * Starts a session (a new refresh-token family) inside the caller's transaction and
   * records SessionCreated, after the caller's own `entries` (one INSERT for all of them).
   * Every sign-in path ends here. Inside `signingIn`, with the tenant's security
   * notifications on, the same statement reads the user's earlier devices, and a sign-in
   * from a new one (sessions/devices.ts) queues an alert: no extra round trip.
   */
  async start(
    tx: Handle,
    tenant: Tenant,
    user: User,
    actor: Actor,
    entries: AuditEntry[] = [],
    claims: Record<string, unknown> = {},
    /** The sign-in proved a second factor (kept on the session, CONTRACT §18 mfaRequired). */
    options: { secondFactor?: boolean } = {},
  ): Promise<TokenEnvelope> {
    const now = this.deps.clock.now()
    const sessionId = uuidv7(now.getTime())
    const refreshToken = randomToken()
    const alerting = tenant.securityNotifications && this.signingInTx.has(tx)
    // A session's expires_at trails its last use by a refresh token's lifetime (each
    // refresh extends it), so "used in the last 90 days" is "expires after this".
    const recentIfExpiresAfter = alerting
      ? new Date(now.getTime() - DEVICE_MEMORY_DAYS * DAY_MS + REFRESH_TOKEN_TTL * 1000)
      : undefined
    const started = await store.insertSession(tx, {
      tenantId: tenant.id,
      sessionId,
      userId: user.id,
      tokenHash: hashToken(refreshToken),
      now,
      expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL * 1000),
      ip: actor.ip,
      userAgent: actor.userAgent,
      recentIfExpiresAfter,
    })
    if (alerting && isNewDevice(started.prior, actor.ip, actor.userAgent)) {
      const alert = {
        event: 'new_device' as const,
        ip: actor.ip,
        userAgent: actor.userAgent,
        language: actor.language,
      }
      afterCommit(tx, () => sendSecurityAlert(this.deps, tenant, user, alert))
    }
    // CONTRACT §18: a verified address of a domain an organization claims joins it.
    const joined = await joinByVerifiedDomain(tx, tenant.id, user, now)
    await this.deps.audit.record(tx, tenant.id, actor, [
      ...entries,
      { action: 'SessionCreated', userId: user.id, metadata: { sessionId } },
      ...joined,
    ])
    if (options.secondFactor) await store.markSecondFactor(tx, tenant.id, sessionId)
    return this.envelope(user, started.roles, sessionId, refreshToken, now, claims)
  }

  /**
   * CONTRACT §22: an administrator's session as `user`, for one access token's life (15
   * minutes) and without a refresh token. The session row is real (so the token is
   * revoked with the user's sessions, listed in me/sessions and ended by logout) but its
   * refresh token is never shown; the access token carries `act: {sub: <admin id>}`.
   * UserImpersonated is recorded with the reason, the administrator as its actor.
   */
  async impersonate(
    tenant: Tenant,
    user: User,
    admin: Actor & { id: string },
    reason: string,
  ): Promise<{ user: UserRecord; accessToken: string; accessTokenExpiresIn: number }> {
    const now = this.deps.clock.now()
    const sessionId = uuidv7(now.getTime())
    const { roles } = await this.deps.db.transaction(async (tx) => {
      const started = await store.insertSession(tx, {
        tenantId: tenant.id,
        sessionId,
        userId: user.id,
        tokenHash: hashToken(randomToken()),
        now,
        expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL * 1000),
        ip: admin.ip,
        userAgent: admin.userAgent,
      })
      await this.deps.audit.record(tx, tenant.id, admin, [
        {
          action: 'UserImpersonated',
          userId: user.id,
          email: user.emailNormalized,
          metadata: { reason, sessionId },
        },
        { action: 'SessionCreated', userId: user.id, metadata: { sessionId } },
      ])
      return started
    })
    const accessToken = this.deps.tokens.issue(
      {
        sub: user.id,
        tid: user.tenantId,
        role: user.role,
        ...(roles.length > 0 ? { roles } : {}),
        sid: sessionId,
        jti: randomToken(12),
        act: { sub: admin.id },
      },
      now,
    )
    return { user: presentUser(user, roles), accessToken, accessTokenExpiresIn: ACCESS_TOKEN_TTL }
  }

  /**
   * Rotates a refresh token; reuse of a rotated one ends its whole family. With
   * `organizationId` (CONTRACT §18) the new access token is an organization token, carrying
   * `org_id` and `org_roles`; the refresh token stays the user's. A user who is not a member
   * is refused (403 not_a_member) before anything is spent, as is a session without a second
   * factor for an organization that requires one (403 mfa_required).
   */
  async refresh(
    tenant: Tenant,
    refreshToken: string,
    actor: Actor,
    organizationId?: string,
  ): Promise<TokenEnvelope> {
    const { db, clock } = this.deps
    const now = clock.now()
    const oldHash = hashToken(refreshToken)
    let orgClaims: { org_id: string; org_roles: string[] } | undefined
    if (organizationId !== undefined) {
      const state = await store.findRefreshToken(db, tenant.id, oldHash)
      // A spent, ended or unknown token is answered below as without an organization.
      if (state && !state.usedAt && !state.revokedAt && state.expiresAt > now) {
        const org = await organizationClaims(db, tenant.id, organizationId, state.userId)
        if (org.mfaRequired && !state.secondFactor) {
          fail('mfa_required', {
            status: 403,
            message: 'This organization requires a session signed in with a second factor.',
          })
        }
        orgClaims = { org_id: org.orgId, org_roles: org.orgRoles }
      }
    }
    const next = randomToken()
    const expiresAt = new Date(now.getTime() + REFRESH_TOKEN_TTL * 1000)
    const rotated = await store.rotateRefreshToken(
      db,
      tenant.id,
      oldHash,
      hashToken(next),
      now,
      expiresAt,
      actor,
    )
    if (rotated) {
      const { user, roles } = rotated
      const subject = { id: user.id, email: user.email, role: user.role, roles }
      const claims = await customClaims(this.deps, tenant, subject, actor)
      return this.envelope(user, roles, rotated.sessionId, next, now, claims, orgClaims)
    }

    const state = await store.findRefreshToken(db, tenant.id, oldHash)
    if (!state) fail('token_invalid')
    if (state.usedAt && !state.revokedAt) {
      // A rotated token came back: someone holds a copy. End the family (SPEC, Refresh
      // token family: "whole family revoked").
      await db.transaction(async (tx) => {
        const ended = await store.revokeSession(tx, tenant.id, state.sessionId, 'reuse')
        const family = { tenantId: tenant.id, userId: state.userId, sessionIds: [state.sessionId] }
        afterCommit(tx, () => this.announce([family]))
        if (ended) {
          await this.deps.audit.record(tx, tenant.id, actor, [
            {
              action: 'SessionFamilyCompromised',
              userId: state.userId,
              metadata: { sessionId: state.sessionId },
            },
            {
              action: 'SessionRevoked',
              userId: state.userId,
              metadata: { sessionId: state.sessionId, reason: 'reuse' },
            },
          ])
        }
      })
      fail('refresh_token_reused')
    }
    if (state.usedAt) fail('refresh_token_reused')
    if (state.revokedAt) fail('session_revoked')
    if (state.expiresAt <= now) fail('token_expired')
    // Live token, but its user was suspended or deleted since.
    fail('session_revoked')
  }

  /** Ends the session of a refresh token. Unknown tokens are ignored (no oracle). */
  async logout(tenant: Tenant, refreshToken: string, actor: Actor): Promise<void> {
    const { db } = this.deps
    const state = await store.findRefreshToken(db, tenant.id, hashToken(refreshToken))
    if (!state || state.revokedAt) return
    await db.transaction(async (tx) => {
      const ok = await store.revokeSession(tx, tenant.id, state.sessionId, 'logout')
      if (ok) {
        const ended = { tenantId: tenant.id, userId: state.userId, sessionIds: [state.sessionId] }
        afterCommit(tx, () => this.announce([ended]))
        const who = { ...actor, type: 'user' as const, id: state.userId }
        await this.deps.audit.record(tx, tenant.id, who, [
          { action: 'UserLogout', userId: state.userId, metadata: { sessionId: state.sessionId } },
          {
            action: 'SessionRevoked',
            userId: state.userId,
            metadata: { sessionId: state.sessionId, reason: 'logout' },
          },
        ])
      }
    })
  }

  /**
   * Ends one live session of a user (CONTRACT §9: DELETE me/sessions/{id}, DELETE
   * users/{userId}/sessions/{id}); 404 `not_found` when the user has no such live session.
   * Records `entries` (UserLogout, when users end the session they sign in with) and
   * SessionRevoked; its access tokens are refused on every instance within seconds (§4).
   */
  async revokeOne(
    tenant: Tenant,
    userId: string,
    sessionId: string,
    actor: Actor,
    reason: string,
    entries: AuditEntry[] = [],
  ): Promise<void> {
    const { db, clock, audit } = this.deps
    const ended = await db.transaction(async (tx) => {
      const ok = await store.revokeUserSession(
        tx,
        tenant.id,
        userId,
        sessionId,
        reason,
        clock.now(),
      )
      if (ok) {
        afterCommit(tx, () =>
          this.announce([{ tenantId: tenant.id, userId, sessionIds: [sessionId] }]),
        )
        await audit.record(tx, tenant.id, actor, [
          ...entries,
          { action: 'SessionRevoked', userId, metadata: { sessionId, reason } },
        ])
      }
      return ok
    })
    if (!ended) fail('not_found')
  }

  /** Ends every session of the signed-in user (logout-all); answers how many. */
  async logoutAll(tenant: Tenant, actor: Actor): Promise<number> {
    const userId = actor.id as string
    const ended = await this.revoking(async (tx, revoke) => {
      const ids = await revoke(tenant.id, userId, actor, 'logout-all')
      await this.deps.audit.record(tx, tenant.id, actor, [
        { action: 'UserLogout', userId, metadata: { all: true, count: ids.length } },
      ])
      return ids
    })
    return ended.length
  }

  /**
   * Runs `work` in one transaction. The sessions it ends through `revoke` are refused on
   * every instance once the transaction commits (CONTRACT §4): the revocation cache hears
   * of them here, so no caller can end a session and forget to tell it.
   */
  async revoking<T>(work: (tx: Handle, revoke: RevokeUserSessions) => Promise<T>): Promise<T> {
    return this.deps.db.transaction(async (tx) => {
      const revoke: RevokeUserSessions = async (tenantId, userId, actor, reason, keep) => {
        const ids = await store.revokeUserSessions(tx, tenantId, userId, reason, keep)
        await this.deps.audit.record(
          tx,
          tenantId,
          actor,
          ids.map((sessionId) => ({
            action: 'SessionRevoked' as const,
            userId,
            metadata: { sessionId, reason },
          })),
        )
        afterCommit(tx, () => this.announce([{ tenantId, userId, sessionIds: ids }]))
        // CONTRACT §21: whatever ends a user's sessions ends their remembered devices too.
        const forgotten = await forgetUserDevices(tx, tenantId, userId)
        if (forgotten > 0) {
          await this.deps.audit.record(tx, tenantId, actor, [
            {
              action: 'RememberedDevicesForgotten',
              userId,
              metadata: { count: forgotten, reason },
            },
          ])
        }
        return ids
      }
      return work(tx, revoke)
    })
  }

  /** Whether the tenant has an enabled hook for `event` (cached: no query while fresh). */
  async hasHook(tenant: Tenant, event: HookEvent): Promise<boolean> {
    return (await this.deps.hooks.enabled(tenant.id, event)) !== undefined
  }

  /**
   * The tenant's before_sign_up or before_sign_in hook, when it has one (CONTRACT §21):
   * returns when it allows, else throws 403 hook_denied (audited HookDenied). Called before
   * any transaction, so a slow hook holds no connection. `user` is read only when a hook
   * is there to be told.
   */
  async gate(
    tenant: Tenant,
    event: 'before_sign_up' | 'before_sign_in',
    user: () => Promise<HookUser>,
    actor: Actor,
    method: HookMethod,
  ): Promise<void> {
    if (!(await this.deps.hooks.enabled(tenant.id, event))) return
    await askHook(this.deps, tenant, event, await user(), actor, method)
  }

  /**
   * The claims the tenant's custom_access_token hook adds to the access token of a session
   * about to start (none without the hook); pass them to `start`. Called before the
   * transaction, like `gate`.
   */
  async claimsFor(
    tenant: Tenant,
    user: () => Promise<HookUser>,
    actor: Actor,
    method: HookMethod,
  ): Promise<Record<string, unknown>> {
    if (!(await this.deps.hooks.enabled(tenant.id, 'custom_access_token'))) return {}
    return customClaims(this.deps, tenant, await user(), actor, { method })
  }

  /**
   * The claims the tenant's custom_access_token hook adds to a token of the OpenID
   * provider (CONTRACT §21): `userId` undefined for client credentials (the hook is told no
   * user, and the application's id).
   */
  async providerClaims(
    tenant: Pick<Tenant, 'id' | 'slug'>,
    userId: string | undefined,
    clientId: string,
    actor: Actor,
  ): Promise<Record<string, unknown>> {
    if (!(await this.deps.hooks.enabled(tenant.id, 'custom_access_token'))) return {}
    const user = userId ? await findUserById(this.deps.db, tenant.id, userId) : undefined
    if (userId && !user) return {}
    const subject = user ? await this.hookUser(tenant, user) : null
    return customClaims(this.deps, tenant, subject, actor, { clientId })
  }

  /** The user as a hook is told of it: base role and custom role names. */
  async hookUser(tenant: Pick<Tenant, 'id'>, user: User): Promise<HookUser> {
    const roles = await userRoleNames(this.deps.db, tenant.id, user.id)
    return { id: user.id, email: user.email, role: user.role, roles }
  }

  /** `roles`: the user's custom role names, sorted: the token's `roles` claim when any (CONTRACT §17). */
  private envelope(
    user: User,
    roles: string[],
    sessionId: string,
    refreshToken: string,
    now: Date,
    claims: Record<string, unknown> = {},
    organization?: { org_id: string; org_roles: string[] },
  ) {
    const accessToken = this.deps.tokens.issue(
      {
        sub: user.id,
        tid: user.tenantId,
        role: user.role,
        ...(roles.length > 0 ? { roles } : {}),
        sid: sessionId,
        jti: randomToken(12),
        ...organization,
      },
      now,
      claims,
    )
    return {
      user: presentUser(user, roles),
      accessToken,
      refreshToken,
      accessTokenExpiresIn: ACCESS_TOKEN_TTL,
      refreshTokenExpiresIn: REFRESH_TOKEN_TTL,
    }
  }
}
