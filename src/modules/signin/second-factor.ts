// Step 3 of the sign-in pipeline: which second factor the policy asks for, and which one
// the request brings (SPEC, Multi-factor and notes 3, 6 and 7; CONTRACT §5). A new factor
// is one file beside this one (see totp.ts, email-otp.ts) and one line below.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { User } from '../users/reads.ts'
import { checkEmailOtp } from './email-otp.ts'
import type { SecondFactorProof } from './pipeline.ts'
import { secondFactorRequired } from './policy.ts'
import { checkRecoveryCode } from './recovery-code.ts'
import { isRemembered } from './remembered-devices.ts'
import { checkTotp } from './totp.ts'

export interface SecondFactorInput {
  /** 'password' offers TOTP and email OTP; 'loginCode' offers TOTP only (SPEC note 3). */
  flow: 'password' | 'loginCode'
  totpCode?: string
  /** CONTRACT §9: accepted instead of totpCode (giving both is 400 `validation`). */
  recoveryCode?: string
  emailOtpCode?: string
  /**
   * CONTRACT §21: a remembered device's token (an API client's `deviceToken`, the hosted
   * pages' cookie); a live one of this user skips the second factor.
   */
  deviceToken?: string
  /** Who is signing in, for the audit of a failed email OTP (anonymous when omitted). */
  actor?: Actor
}

/**
 * The checked (unspent) second factor, undefined when the policy asks none; or throws
 * mfa_required / mfa_not_enrolled / invalid_mfa_code.
 */
export async function checkSecondFactor(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'audit' | 'cipher'>,
  tenant: Tenant,
  user: User,
  input: SecondFactorInput,
): Promise<SecondFactorProof | undefined> {
  if (input.totpCode && input.recoveryCode) {
    fail('validation', { message: 'Give either totpCode or recoveryCode, not both.' })
  }
  if (!secondFactorRequired(tenant, user)) return undefined
  // The one place a remembered device stands in for the second factor (CONTRACT §21).
  if (await isRemembered(deps.db, tenant, user.id, input.deviceToken, deps.clock.now())) {
    return { remembered: true, spend: async () => ({ entries: [] }) }
  }
  // A recovery code stands in for a TOTP code, of a user who has TOTP.
  if (input.recoveryCode && user.totpEnabled) {
    return checkRecoveryCode(deps, user, input.recoveryCode)
  }
  if (input.flow === 'loginCode') {
    // SPEC note 4: without TOTP the user must enrol through initial-enroll/initial-verify.
    if (!user.totpEnabled) fail('mfa_not_enrolled')
    if (!input.totpCode) fail('mfa_required', { details: { methods: ['totp'] } })
    return checkTotp(deps, user, input.totpCode, input.flow)
  }
  // A TOTP code is checked when the user has TOTP; otherwise an email OTP when one is sent.
  if (input.totpCode && (user.totpEnabled || !input.emailOtpCode)) {
    return checkTotp(deps, user, input.totpCode, input.flow)
  }
  if (input.emailOtpCode) return checkEmailOtp(deps, user, input.emailOtpCode, input.actor)
  const methods = user.totpEnabled ? ['totp', 'email'] : ['email']
  fail('mfa_required', { details: { methods } })
}
