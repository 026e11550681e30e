// First factor: a code mailed to reset the password or to verify the address (CONTRACT
// §9), requested with auth/request-password-reset or auth/request-email-verification. It
// follows the login-code rules (signin/login-code.ts): checked without being spent, so it
// stays valid while a second factor is asked for; a wrong guess counts against the code
// at once (the 5th burns it) and against the sign-in budgets (§6, §8); spent in the
// session's transaction, where it proves the address and activates a Pending user.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { type CodeOwner, spendCode } from '../codes/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { lockUserRow, type User } from '../users/reads.ts'
import { markAddressProven } from '../users/writes.ts'
import { checkMailedCode } from './mailed-code.ts'
import type { FirstFactorProof, SecondFactorProof, Spent } from './pipeline.ts'
import { secondFactorRequired } from './policy.ts'
import { checkSecondFactor } from './second-factor.ts'

export type AccountCodePurpose = 'reset' | 'verify'

type AccountCodeDeps = Pick<Deps, 'db' | 'guard' | 'audit' | 'clock' | 'config'>

/** `via` of UserLogin, UserLoginFailed and UserEmailVerified, by purpose. */
export const ACCOUNT_CODE_VIA = { reset: 'reset', verify: 'email-verification' } as const

export const accountCodeOwner = (
  tenantId: string,
  userId: string,
  purpose: AccountCodePurpose,
): CodeOwner => ({ tenantId, userId, purpose })

/**
 * An unknown, deleted or Suspended address and a wrong, expired, burned or superseded
 * code all answer 401 `invalid_code`, after the same statements (an unknown address runs
 * them against an id that matches nothing).
 */
export async function proveAccountCode(
  deps: AccountCodeDeps,
  tenant: Tenant,
  rawEmail: string,
  code: string,
  purpose: AccountCodePurpose,
  actor: Actor,
): Promise<FirstFactorProof> {
  const { email, attempt, found, user, cause } = await checkMailedCode(
    deps,
    tenant,
    rawEmail,
    code,
    purpose,
    actor,
  )
  const via = ACCOUNT_CODE_VIA[purpose]
  if (user) {
    return {
      user,
      email,
      attempt,
      via,
      spend: (tx) => spendAccountCode(deps, tx, tenant, user, code, purpose),
    }
  }
  await deps.audit.record(deps.db, tenant.id, actor, [
    {
      action: 'UserLoginFailed',
      userId: found?.id ?? null,
      email,
      metadata: { email, reason: 'invalid_code', via, cause },
    },
  ])
  fail('invalid_code')
}

/**
 * Spends the code (one atomic UPDATE: of two parallel uses only one passes), proves the
 * address, activates a Pending user and stamps the login (CONTRACT §9).
 */
async function spendAccountCode(
  deps: AccountCodeDeps,
  tx: Handle,
  tenant: Tenant,
  user: User,
  code: string,
  purpose: AccountCodePurpose,
): Promise<Spent> {
  // The user row is locked before the code row, in the order a code request takes them.
  await lockUserRow(tx, tenant.id, user.id)
  const spent = await spendCode(deps, tx, accountCodeOwner(tenant.id, user.id, purpose), code)
  if (!spent.ok) fail('invalid_code')
  const now = deps.clock.now()
  const updated = await markAddressProven(tx, tenant.id, user.id, {
    lastLoginAt: now,
    updatedAt: now,
  })
  if (!updated) fail('invalid_code')
  return { user: updated, entries: verifiedEntries(user, ACCOUNT_CODE_VIA[purpose]) }
}

/** UserEmailVerified, at the first proof of the address only. */
export function verifiedEntries(user: User, via: string): AuditEntry[] {
  if (user.emailVerified) return []
  return [
    {
      action: 'UserEmailVerified',
      userId: user.id,
      email: user.emailNormalized,
      metadata: { via },
    },
  ]
}

/**
 * The second factor of a reset or a verification sign-in (CONTRACT §9): the mailed code was
 * the email factor, so a TOTP code (or a recovery code) is asked where a login would ask
 * this TOTP-enrolled user for one (mfaPolicy Optional or Required), with methods
 * `["totp"]`; a user without TOTP needs nothing more.
 */
export function accountSecondFactor(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'audit' | 'cipher'>,
  tenant: Tenant,
  user: User,
  input: { totpCode?: string; recoveryCode?: string },
  actor: Actor,
): Promise<SecondFactorProof | undefined> {
  if (!user.totpEnabled || !secondFactorRequired(tenant, user)) return Promise.resolve(undefined)
  return checkSecondFactor(deps, tenant, user, {
    flow: 'loginCode',
    totpCode: input.totpCode,
    recoveryCode: input.recoveryCode,
    actor,
  })
}
