// TOTP enrolment, in two steps (SPEC, MFA): begin (a new secret, its otpauth URI and a QR
// code), then verify a code from the authenticator to activate the factor.
//   mfa/totp/enroll, mfa/totp/verify       for a signed-in user (Bearer)
//   auth/totp/initial-enroll, initial-verify for a user who must enrol before signing in
//     (SPEC note 4), proving a password or a login code; initial-verify signs in.
import type { Deps } from '../../deps.ts'
import { AppError, fail } from '../../lib/errors.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { spendLoginCode } from '../passwordless/service.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import type { Tenant } from '../tenants/store.ts'
import { findUserById, type User } from '../users/store.ts'
import { proveFirstFactor } from './first-factor.ts'
import { activateTotp, storePendingTotp } from './store.ts'
import {
  enrolmentView,
  matchTotpStep,
  newTotpSecret,
  openTotpSecret,
  sealTotpSecret,
} from './totp.ts'

export interface Enrolment {
  secret: string
  otpauthUri: string
  qrCodeSvg: string
}

/** Stores a new pending secret for `user`; 409 while TOTP is active (CONTRACT §5). */
async function begin(deps: Deps, tenant: Tenant, user: User): Promise<Enrolment> {
  if (user.totpEnabled) fail('already_enrolled')
  const secret = newTotpSecret()
  const sealed = sealTotpSecret(deps.cipher, tenant.id, user.id, secret)
  const stored = await storePendingTotp(deps.db, tenant.id, user.id, sealed, deps.clock.now())
  if (!stored) fail('already_enrolled')
  return enrolmentView(tenant.name, user.email, secret)
}

/** The time step a code of the pending secret belongs to, or null. */
function pendingStep(deps: Deps, user: User, code: string): number | null {
  if (user.totpEnabled || !user.totpSecretEnc) return null
  const secret = openTotpSecret(deps.cipher, user.tenantId, user.id, user.totpSecretEnc)
  return secret === undefined ? null : matchTotpStep(secret, code, deps.clock.now())
}

const enrolledEntries = (user: User, via: string): AuditEntry[] => [
  { action: 'MfaTotpEnrolled', userId: user.id, email: user.emailNormalized, metadata: { via } },
  { action: 'MfaTotpVerified', userId: user.id, email: user.emailNormalized, metadata: { via } },
]

/** POST mfa/totp/enroll. */
export async function enrollSignedIn(deps: Deps, tenant: Tenant, userId: string) {
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  return begin(deps, tenant, user)
}

/** POST mfa/totp/verify: activates the pending secret with a code from the authenticator. */
export async function verifySignedIn(
  deps: Deps,
  tenant: Tenant,
  userId: string,
  code: string,
  actor: Actor,
): Promise<void> {
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  if (user.totpEnabled) fail('already_enrolled')
  const step = pendingStep(deps, user, code)
  if (step === null || !user.totpSecretEnc) fail('invalid_mfa_code')
  const sealed = user.totpSecretEnc
  await deps.db.transaction(async (tx) => {
    const now = deps.clock.now()
    const activated = await activateTotp(tx, tenant.id, user.id, sealed, step, { updatedAt: now })
    if (!activated) fail('invalid_mfa_code')
    await deps.audit.record(tx, tenant.id, actor, enrolledEntries(user, 'mfa/totp/verify'))
  })
}

export interface InitialInput {
  email: string
  password?: string
  loginCode?: string
}

/** CONTRACT §5: the initial-* routes answer 403 `mfa_disabled` when the policy is Disabled. */
function requireMfa(tenant: Tenant): void {
  if (tenant.mfaPolicy === 'Disabled') fail('mfa_disabled')
}

/**
 * POST auth/totp/initial-enroll. The first factor is proven (a login code is checked, not
 * spent) before anything about the account is told, then a pending secret is stored.
 */
export async function initialEnroll(
  deps: Deps,
  tenant: Tenant,
  input: InitialInput,
  actor: Actor,
): Promise<Enrolment> {
  requireMfa(tenant)
  const proof = await proveFirstFactor(deps, tenant, input, actor, 'totp/initial-enroll')
  // Not a sign-in: the try is given back, the account's run of failures goes on.
  await proof.attempt.release()
  return begin(deps, tenant, proof.user)
}

/**
 * POST auth/totp/initial-verify: the first factor again, then a code of the pending
 * secret; on success TOTP is active, a login code is spent and a session starts, all in
 * one transaction.
 */
export async function initialVerify(
  deps: Deps,
  tenant: Tenant,
  input: InitialInput & { code: string },
  actor: Actor,
): Promise<TokenEnvelope> {
  await deps.limits.hit('tokenEndpoints', actor.ip ?? '')
  requireMfa(tenant)
  const proof = await proveFirstFactor(deps, tenant, input, actor, 'totp/initial-verify')
  const { user, email, attempt } = proof
  if (user.totpEnabled) {
    await attempt.release()
    fail('already_enrolled')
  }
  const failed = async () => {
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'UserLoginFailed',
        userId: user.id,
        email,
        metadata: {
          email,
          reason: 'invalid_mfa_code',
          via: proof.via,
          route: 'totp/initial-verify',
        },
      },
    ])
    fail('invalid_mfa_code')
  }
  const step = pendingStep(deps, user, input.code)
  if (step === null || !user.totpSecretEnc) return failed()
  const sealed = user.totpSecretEnc

  let envelope: TokenEnvelope
  try {
    envelope = await deps.db.transaction(async (tx) => {
      const now = deps.clock.now()
      const entries: AuditEntry[] = []
      if (proof.loginCode !== undefined) {
        // CONTRACT §5: the login code checked at enrol is spent at a successful verify;
        // a Pending user becomes Active and the address is proven.
        const spent = await spendLoginCode(deps, tx, tenant, user, proof.loginCode)
        entries.push(...spent.entries)
      }
      const activated = await activateTotp(tx, tenant.id, user.id, sealed, step, {
        lastLoginAt: now,
        updatedAt: now,
      })
      if (!activated) fail('invalid_mfa_code')
      const who: Actor = { ...actor, type: 'user', id: user.id }
      await deps.audit.record(tx, tenant.id, who, [
        ...entries,
        ...enrolledEntries(user, 'totp/initial-verify'),
        { action: 'UserLogin', userId: user.id, email, metadata: { via: proof.via } },
      ])
      return deps.sessions.start(tx, tenant, activated, who)
    })
  } catch (error) {
    if (error instanceof AppError && error.reason === 'invalid_mfa_code') return failed()
    throw error
  }
  await attempt.succeeded()
  return envelope
}
