// The second factor after a federated sign-in (CONTRACT §12: "mfaPolicy applies after SSO
// unless mfaSatisfied"). When the tenant's policy asks a second factor of a user who has
// TOTP, and the IdP reported none (and the connection is not `mfaSatisfied`), the linker
// (federation/link.ts) links the identity and, instead of starting a session, stores a pending
// sign-in here: five minutes, single use, keyed by a random id (hashed at rest, in the
// one-time states table of §7; its content sealed, bound to the tenant), bound to the
// browser by the `ta_pending` cookie (over https `__Host-ta_pending_{slug}` at `/`, §16;
// over http scoped to the tenant's pages). The hosted page (web/pages/sso-second-factor.ts)
// asks for the TOTP code or a recovery code and calls `finishPendingSignIn`, which checks
// it with the password sign-in's own second-factor code (signin/totp.ts,
// signin/recovery-code.ts: the same failure budgets, the TOTP step claimed once, the same
// audit rows) and starts the session in the transaction that spends the pending state.
// A user with no second factor of ours is refused as before (`mfa_required`).
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { hostCookie } from '../../lib/host-cookie.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { askSignInHooks, type SecondFactorProof } from '../signin/pipeline.ts'
import { checkRecoveryCode } from '../signin/recovery-code.ts'
import { rememberDevice, remembersDevices } from '../signin/remembered-devices.ts'
import { checkTotp } from '../signin/totp.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById } from '../users/reads.ts'
import { stampLastLogin } from '../users/writes.ts'
import { findLiveState, insertState, spendState } from './states.ts'

/** Five minutes to give the second factor. */
export const PENDING_TTL = 300
const MARK = 'pending-mfa'
const aad = (tenantId: string) => `pending-mfa:${tenantId}`
const stateHashOf = (id: string) => hashToken(`${MARK}:${id}`)

/** The browser's pending sign-in cookie of a tenant (lib/host-cookie.ts). */
export const pendingCookie = (publicUrl: string, slug: string) =>
  hostCookie(publicUrl, 'ta_pending', [slug], `/t/${slug}`)

/** What a pending sign-in remembers. */
export interface PendingSignIn {
  userId: string
  /** The SSO connection it came through; null for the SPEC's identity provider (§7). */
  connectionId: string | null
  /** The RFC 8176 `amr` so far (`fed`). */
  amr: string[]
  /** Metadata of the UserLogin row (method, connectionId, subject, clientId). */
  via: Record<string, unknown>
  /** Metadata of a UserLoginFailed row, besides email and reason. */
  failVia: Record<string, unknown>
  /** The OpenID interaction (§11) the sign-in serves, if any. */
  interaction?: string
  /** The hooks' `context.method`; absent: `sso` with a connection, else `idp`. */
  method?: 'social'
}

type PendingDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'sessions'>

/** Stores a pending sign-in in `tx` (the linker's transaction) and answers its id. */
export async function storePendingSignIn(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  tx: Handle,
  tenantId: string,
  pending: PendingSignIn,
): Promise<string> {
  const id = randomToken()
  await insertState(
    tx,
    {
      tenantId,
      connectionId: pending.connectionId ?? undefined,
      stateHash: stateHashOf(id),
      codeVerifier: deps.cipher.encrypt(JSON.stringify(pending), aad(tenantId)),
      nonce: MARK,
      now: deps.clock.now(),
    },
    PENDING_TTL,
  )
  return id
}

/** The live (unused, unexpired) pending sign-in `id` of the tenant, or undefined. */
export async function openPendingSignIn(
  deps: Pick<Deps, 'cipher' | 'clock' | 'db'>,
  tenantId: string,
  id: string | undefined,
): Promise<PendingSignIn | undefined> {
  if (!id || id.length > 100) return undefined
  const row = await findLiveState(deps.db, tenantId, stateHashOf(id), deps.clock.now())
  if (!row || row.nonce !== MARK) return undefined
  try {
    const value = JSON.parse(deps.cipher.decrypt(row.codeVerifier, aad(tenantId)))
    if (typeof value?.userId !== 'string' || value.connectionId !== row.connectionId) {
      return undefined
    }
    return value as PendingSignIn
  } catch {
    return undefined
  }
}

/**
 * Finishes the pending sign-in `id` with a TOTP code or a recovery code. Unknown, used,
 * expired: 400 `invalid_state`. A wrong code: 401 `invalid_mfa_code`, audited as
 * UserLoginFailed and counted in the failure budgets (§6, as the password sign-in's second
 * step); the pending state stays for another try until it expires. The right one: one
 * transaction spends the state (a second use finds it spent: `invalid_state`) and the code
 * and starts the session (UserLogin with the connection's metadata, MfaTotpVerified with
 * flow `sso`, or MfaRecoveryCodeUsed). Answers the envelope, the `amr` (`fed` + `otp` +
 * `mfa`; a recovery code `fed` + `mfa`) and the interaction the sign-in serves. With
 * `rememberDevice`, where the tenant remembers devices, a device token is minted in that
 * transaction (CONTRACT §21) for the page's cookie.
 */
export async function finishPendingSignIn(
  deps: PendingDeps,
  tenant: Tenant,
  id: string | undefined,
  input: { totpCode?: string; recoveryCode?: string; rememberDevice?: boolean },
  actor: Actor,
): Promise<{ envelope: TokenEnvelope; amr: string[]; interaction?: string; deviceToken?: string }> {
  const pending = await openPendingSignIn(deps, tenant.id, id)
  if (!pending || !id) fail('invalid_state')
  const user = await findUserById(deps.db, tenant.id, pending.userId)
  if (!user) fail('invalid_credentials')
  if (user.status !== 'Active') fail('account_suspended')
  const email = user.emailNormalized
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: 'code',
  })
  const failed = async (error: unknown) => {
    if (!(error instanceof AppError) || error.reason !== 'invalid_mfa_code') {
      await attempt.release()
      return
    }
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'UserLoginFailed',
        userId: user.id,
        email,
        metadata: { ...pending.failVia, email, reason: 'invalid_mfa_code' },
      },
    ])
  }
  const recovery = Boolean(input.recoveryCode?.trim()) && !input.totpCode?.trim()
  let second: SecondFactorProof
  try {
    second = recovery
      ? await checkRecoveryCode(deps, user, input.recoveryCode?.trim() ?? '')
      : checkTotp(deps, user, input.totpCode?.trim() ?? '', 'sso')
  } catch (error) {
    await failed(error)
    throw error
  }
  // CONTRACT §21: the session's first access token carries custom_access_token's claims
  // (before_sign_in was asked when the sign-in was deferred, signin/pipeline.ts).
  let claims: Record<string, unknown>
  try {
    claims = await askSignInHooks(
      deps,
      tenant,
      'before_sign_in',
      () => deps.sessions.hookUser(tenant, user),
      actor,
      pending.method ?? (pending.connectionId ? 'sso' : 'idp'),
      { gate: false },
    )
  } catch (error) {
    await attempt.release()
    throw error
  }
  let envelope: TokenEnvelope
  let deviceToken: string | undefined
  try {
    envelope = await deps.sessions.signingIn(async (tx) => {
      const now = deps.clock.now()
      const spent = await spendState(tx, tenant.id, stateHashOf(id), now, pending.connectionId)
      if (!spent) fail('invalid_state')
      const other = await second.spend(tx)
      const updated = await stampLastLogin(tx, tenant.id, user.id, now)
      if (!updated) fail('invalid_credentials')
      if (updated.status !== 'Active') fail('account_suspended')
      for (const alert of other.alerts ?? []) {
        deps.sessions.alertOnCommit(tx, tenant, updated, {
          ...alert,
          ip: actor.ip,
          userAgent: actor.userAgent,
        })
      }
      if (input.rememberDevice && remembersDevices(tenant)) {
        deviceToken = await rememberDevice(tx, tenant, user.id, now)
      }
      const who: Actor = { ...actor, type: 'user', id: user.id }
      const metadata = deviceToken ? { ...pending.via, deviceRemembered: true } : pending.via
      const entries: AuditEntry[] = [
        ...other.entries,
        { action: 'UserLogin', userId: user.id, email, metadata },
      ]
      return deps.sessions.start(tx, tenant, updated, who, entries, claims, { secondFactor: true })
    })
  } catch (error) {
    await failed(error)
    throw error
  }
  await attempt.succeeded()
  const amr = recovery ? [...pending.amr, 'mfa'] : [...pending.amr, 'otp', 'mfa']
  return {
    envelope,
    amr,
    interaction: pending.interaction,
    ...(deviceToken ? { deviceToken } : {}),
  }
}
