// Second factor: an emailed one-time code (SPEC note 7; CONTRACT §5), requested with
// auth/request-email-otp. A wrong guess counts against the code at once (the 5th burns
// it) and is audited; the code is spent in the session's transaction, and reaching the
// mailbox proves the address the first time.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { type Actor, type AuditEntry, SYSTEM_ACTOR } from '../audit/recorder.ts'
import { type CodeOwner, checkCode, spendCode } from '../codes/service.ts'
import type { User } from '../users/reads.ts'
import { markEmailVerified } from '../users/writes.ts'
import type { SecondFactorProof } from './pipeline.ts'

type EmailOtpDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'audit'>

export async function checkEmailOtp(
  deps: EmailOtpDeps,
  user: User,
  code: string,
  actor: Actor = { ...SYSTEM_ACTOR, type: 'anonymous' },
): Promise<SecondFactorProof> {
  const owner: CodeOwner = { tenantId: user.tenantId, userId: user.id, purpose: 'mfa' }
  const email = user.emailNormalized
  const check = await checkCode(deps, owner, code)
  if (!check.ok) {
    await deps.audit.record(deps.db, user.tenantId, actor, [
      { action: 'MfaEmailOtpFailed', userId: user.id, email, metadata: { reason: check.reason } },
    ])
    fail('invalid_mfa_code')
  }
  return {
    spend: async (tx) => {
      const spent = await spendCode(deps, tx, owner, code)
      if (!spent.ok) fail('invalid_mfa_code')
      const entries: AuditEntry[] = [{ action: 'MfaEmailOtpVerified', userId: user.id, email }]
      const verified = await markEmailVerified(tx, user.tenantId, user.id, deps.clock.now())
      if (verified) {
        entries.push({
          action: 'UserEmailVerified',
          userId: user.id,
          email,
          metadata: { via: 'email-otp' },
        })
      }
      return { user: verified, entries }
    },
  }
}
