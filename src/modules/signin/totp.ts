// Second factor: a TOTP code (RFC 6238; CONTRACT §5), of the user's active authenticator,
// or of the one being enrolled at auth/totp/initial-verify. Checked against the clock's
// ±1 step window; its time step is claimed in the session's transaction, so a code is
// accepted once even by parallel sign-ins on several instances.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { AuditEntry } from '../audit/recorder.ts'
import { matchTotpStep, openTotpSecret } from '../mfa/totp.ts'
import type { User } from '../users/reads.ts'
import { activateTotp, claimTotpStep } from '../users/writes.ts'
import type { SecondFactorProof } from './pipeline.ts'

type TotpDeps = Pick<Deps, 'cipher' | 'clock'>

/** A code of the user's active authenticator; `flow` is MfaTotpVerified's metadata. */
export function checkTotp(
  deps: TotpDeps,
  user: User,
  code: string,
  flow: 'password' | 'loginCode' | 'reauthenticate' | 'sso',
): SecondFactorProof {
  if (!user.totpEnabled || !user.totpSecretEnc) fail('invalid_mfa_code')
  const step = stepOf(deps, user, user.totpSecretEnc, code)
  // A step already accepted is refused at once; the claim below settles any race.
  if (step === null || (user.totpLastStep !== null && step <= user.totpLastStep)) {
    fail('invalid_mfa_code')
  }
  return {
    spend: async (tx) => {
      if (!(await claimTotpStep(tx, user.tenantId, user.id, step))) fail('invalid_mfa_code')
      const entries: AuditEntry[] = [
        {
          action: 'MfaTotpVerified',
          userId: user.id,
          email: user.emailNormalized,
          metadata: { flow },
        },
      ]
      return { entries }
    },
  }
}

/**
 * A code of the authenticator being enrolled (SPEC note 4): spending it activates TOTP.
 * 409 `already_enrolled` while TOTP is active.
 */
export function checkPendingTotp(deps: TotpDeps, user: User, code: string, via: string) {
  if (user.totpEnabled) fail('already_enrolled')
  const step = pendingStep(deps, user, code)
  if (step === null || !user.totpSecretEnc) fail('invalid_mfa_code')
  const sealed = user.totpSecretEnc
  const proof: SecondFactorProof = {
    spend: async (tx) => {
      const now = deps.clock.now()
      const activated = await activateTotp(tx, user.tenantId, user.id, sealed, step, {
        lastLoginAt: now,
        updatedAt: now,
      })
      if (!activated) fail('invalid_mfa_code')
      return { user: activated, entries: enrolledEntries(user, via) }
    },
  }
  return proof
}

/** The time step a code of the pending (not yet active) secret belongs to, or null. */
export function pendingStep(deps: TotpDeps, user: User, code: string): number | null {
  if (user.totpEnabled || !user.totpSecretEnc) return null
  return stepOf(deps, user, user.totpSecretEnc, code)
}

export const enrolledEntries = (user: User, via: string): AuditEntry[] => [
  { action: 'MfaTotpEnrolled', userId: user.id, email: user.emailNormalized, metadata: { via } },
  { action: 'MfaTotpVerified', userId: user.id, email: user.emailNormalized, metadata: { via } },
]

function stepOf(deps: TotpDeps, user: User, sealed: string, code: string): number | null {
  const secret = openTotpSecret(deps.cipher, user.tenantId, user.id, sealed)
  return secret === undefined ? null : matchTotpStep(secret, code, deps.clock.now())
}
