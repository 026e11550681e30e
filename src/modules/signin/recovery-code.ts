// Second factor: an MFA recovery code (CONTRACT §9), accepted wherever a TOTP code is, for
// a user with TOTP. Ten per user, `xxxxx-xxxxx` lowercase base32, compared
// case-insensitively with the hyphen and spaces optional; one use each, spent atomically
// in the session's transaction; audited as MfaRecoveryCodeUsed with `metadata.remaining`,
// and the user is told by a security alert once the sign-in committed.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { hasUnspentCode, recoveryCodeCandidates, spendRecoveryCode } from '../mfa/recovery-codes.ts'
import type { User } from '../users/reads.ts'
import type { SecondFactorProof } from './pipeline.ts'

/**
 * Checks the code without spending it (a wrong or spent one: 401 `invalid_mfa_code`,
 * which the pipeline records as a failed sign-in). Spending it is the one atomic UPDATE:
 * of two parallel sign-ins with one code, one wins and the other fails the same way.
 */
export async function checkRecoveryCode(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  user: User,
  code: string,
): Promise<SecondFactorProof> {
  const candidates = recoveryCodeCandidates(
    deps.config.encryptionKeys,
    user.tenantId,
    user.id,
    code,
  )
  if (candidates.length === 0) fail('invalid_mfa_code')
  if (!(await hasUnspentCode(deps.db, user.tenantId, user.id, candidates))) {
    fail('invalid_mfa_code')
  }
  return {
    spend: async (tx) => {
      const spent = await spendRecoveryCode(
        tx,
        user.tenantId,
        user.id,
        candidates,
        deps.clock.now(),
      )
      if (!spent) fail('invalid_mfa_code')
      const { remaining } = spent
      return {
        entries: [
          {
            action: 'MfaRecoveryCodeUsed',
            userId: user.id,
            email: user.emailNormalized,
            metadata: { remaining },
          },
        ],
        alerts: [
          {
            event: 'recovery_code_used',
            notes: [`Recovery codes left: ${remaining} of 10.`],
          },
        ],
      }
    },
  }
}
