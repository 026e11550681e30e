// The second-factor step every sign-in path calls after its first factor succeeded
// (SPEC, Multi-factor and notes 3, 6 and 7; CONTRACT §5). It answers the audit entries to
// record when the factor was verified, or throws mfa_required / mfa_not_enrolled /
// invalid_mfa_code.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { type Actor, type AuditEntry, SYSTEM_ACTOR } from '../audit/recorder.ts'
import { spendCode } from '../passwordless/codes.ts'
import type { Tenant } from '../tenants/store.ts'
import type { User } from '../users/store.ts'
import { claimTotpStep, markEmailVerified } from './store.ts'
import { matchTotpStep, openTotpSecret } from './totp.ts'

export interface SecondFactorInput {
  /** 'password' offers TOTP and email OTP; 'loginCode' offers TOTP only (SPEC note 3). */
  flow: 'password' | 'loginCode'
  totpCode?: string
  emailOtpCode?: string
  /** Who is signing in, for the audit of a failed email OTP (anonymous when omitted). */
  actor?: Actor
}

/** Whether the tenant's policy asks this user for a second factor (CONTRACT §5). */
export function secondFactorRequired(tenant: Tenant, user: User): boolean {
  if (tenant.mfaPolicy === 'Required') return true
  if (tenant.mfaPolicy === 'Optional') return user.totpEnabled
  return false
}

export async function checkSecondFactor(
  deps: Deps,
  tenant: Tenant,
  user: User,
  input: SecondFactorInput,
): Promise<AuditEntry[]> {
  if (!secondFactorRequired(tenant, user)) return []
  if (input.flow === 'loginCode') {
    // SPEC note 4: without TOTP the user must enrol through initial-enroll/initial-verify.
    if (!user.totpEnabled) fail('mfa_not_enrolled')
    if (!input.totpCode) fail('mfa_required', { details: { methods: ['totp'] } })
    return verifyTotp(deps, user, input.totpCode, input.flow)
  }
  // A TOTP code is checked when the user has TOTP; otherwise an email OTP when one is sent.
  if (input.totpCode && (user.totpEnabled || !input.emailOtpCode)) {
    return verifyTotp(deps, user, input.totpCode, input.flow)
  }
  if (input.emailOtpCode) return verifyEmailOtp(deps, user, input.emailOtpCode, input.actor)
  const methods = user.totpEnabled ? ['totp', 'email'] : ['email']
  fail('mfa_required', { details: { methods } })
}

/**
 * A TOTP code of the user's active factor, in the ±1 step window of deps.clock; its time
 * step is claimed atomically, so a code is accepted once even by parallel sign-ins.
 */
async function verifyTotp(
  deps: Deps,
  user: User,
  code: string,
  flow: SecondFactorInput['flow'],
): Promise<AuditEntry[]> {
  if (!user.totpEnabled || !user.totpSecretEnc) fail('invalid_mfa_code')
  const secret = openTotpSecret(deps.cipher, user.tenantId, user.id, user.totpSecretEnc)
  const step = secret === undefined ? null : matchTotpStep(secret, code, deps.clock.now())
  if (step === null || !(await claimTotpStep(deps.db, user.tenantId, user.id, step))) {
    fail('invalid_mfa_code')
  }
  return [
    { action: 'MfaTotpVerified', userId: user.id, email: user.emailNormalized, metadata: { flow } },
  ]
}

/**
 * An email OTP (requested with request-email-otp): spent in one atomic statement; a wrong
 * guess counts against the code, and the 5th burns it. Reaching the mailbox also proves
 * the address, the first time.
 */
async function verifyEmailOtp(
  deps: Deps,
  user: User,
  code: string,
  actor: Actor = { ...SYSTEM_ACTOR, type: 'anonymous' },
): Promise<AuditEntry[]> {
  const owner = { tenantId: user.tenantId, userId: user.id, purpose: 'mfa' as const }
  const email = user.emailNormalized
  const spent = await spendCode(deps, deps.db, owner, code)
  if (!spent.ok) {
    await deps.audit.record(deps.db, user.tenantId, actor, [
      { action: 'MfaEmailOtpFailed', userId: user.id, email, metadata: { reason: spent.reason } },
    ])
    fail('invalid_mfa_code')
  }
  const entries: AuditEntry[] = [{ action: 'MfaEmailOtpVerified', userId: user.id, email }]
  if (await markEmailVerified(deps.db, user.tenantId, user.id, deps.clock.now())) {
    entries.push({
      action: 'UserEmailVerified',
      userId: user.id,
      email,
      metadata: { via: 'email-otp' },
    })
  }
  return entries
}
