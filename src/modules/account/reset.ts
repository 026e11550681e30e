// Password reset (CONTRACT §9): auth/request-password-reset mails a 6-digit code;
// auth/reset-password sets a new password with it and signs in. The checks run in the
// contract's order: the body and the password rules (400: the code is neither spent nor
// counted), then the code (401 invalid_code), then the second factor a login would ask a
// TOTP-enrolled user for (401 mfa_required / invalid_mfa_code: the code stays valid). The
// reset is a first factor of the sign-in pipeline (signin/account-code.ts), so the code,
// the second factor, the new password, the end of every earlier session and the new
// session commit together or not at all.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { hashPassword, isWeakPassword } from '../../lib/passwords.ts'
import type { Actor } from '../audit/recorder.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { accountSecondFactor, proveAccountCode } from '../signin/account-code.ts'
import { completeSignIn, type FirstFactorProof } from '../signin/pipeline.ts'
import { refusePasswords } from '../signin/policy.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { refuseBreachedPassword } from '../users/service.ts'
import { updateUser } from '../users/writes.ts'
import { type RequestDeps, requestAccountCode } from './request.ts'
import type { ResetPasswordBody } from './schemas.ts'
import { oneSecondFactor } from './second-factor-input.ts'

/** POST auth/request-password-reset. PasswordlessOnly: 403, and nothing is mailed. */
export async function requestPasswordReset(
  deps: RequestDeps,
  tenant: Tenant,
  email: string,
  actor: Actor,
): Promise<void> {
  refusePasswords(tenant, 403)
  await requestAccountCode(deps, tenant, email, 'reset', actor)
}

type ResetDeps = Pick<
  Deps,
  'audit' | 'breached' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'mailer' | 'sessions'
>

/** POST auth/reset-password → a token envelope; every earlier session ends (CONTRACT §4). */
export async function resetPassword(
  deps: ResetDeps,
  tenant: Tenant,
  input: ResetPasswordBody,
  actor: Actor,
): Promise<TokenEnvelope> {
  refusePasswords(tenant, 403)
  oneSecondFactor(input)
  if (isWeakPassword(input.newPassword, { email: input.email, tenantName: tenant.name })) {
    fail('password_too_weak')
  }
  await refuseBreachedPassword(deps, tenant, input.newPassword)
  const code = await proveAccountCode(deps, tenant, input.email, input.code, 'reset', actor)
  // Hashed once both factors are checked (argon2id in the bounded queue), before the
  // transaction opens, so a connection is never held while hashing.
  let passwordHash: string | undefined
  const proof: FirstFactorProof = {
    ...code,
    spend: async (tx, revoke) => {
      if (passwordHash === undefined) throw new Error('the new password was not hashed')
      const spent = await code.spend(tx, revoke)
      const user = await updateUser(tx, tenant.id, code.user.id, {
        passwordHash,
        passwordBreached: false,
        updatedAt: deps.clock.now(),
      })
      if (!user) fail('invalid_code')
      const who: Actor = { ...actor, type: 'user', id: user.id }
      const ended = await revoke(tenant.id, user.id, who, 'password-reset')
      return {
        user,
        entries: [
          ...spent.entries,
          {
            action: 'UserPasswordChanged',
            userId: user.id,
            email: user.emailNormalized,
            metadata: { via: 'reset', sessionsEnded: ended.length },
          },
        ],
      }
    },
  }
  const envelope = await completeSignIn(
    deps,
    tenant,
    proof,
    async () => {
      const second = await accountSecondFactor(deps, tenant, code.user, input, actor)
      passwordHash = await hashPassword(input.newPassword)
      return second
    },
    actor,
    { failure: { via: 'reset' } },
  )
  sendSecurityAlert(deps, tenant, envelope.user, {
    event: 'password_reset',
    ip: actor.ip,
    userAgent: actor.userAgent,
  })
  return envelope
}
