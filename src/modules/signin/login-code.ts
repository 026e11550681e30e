// First factor: an emailed login code (SPEC, the login-code state table and notes 2 to 4;
// CONTRACT §5). It is checked without being spent, so it stays valid while a second factor
// is asked for, and spent in the session's transaction.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { type CodeOwner, spendCode } from '../codes/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { lockUserRow, type User } from '../users/reads.ts'
import { markSignedInByCode } from '../users/writes.ts'
import { checkMailedCode } from './mailed-code.ts'
import type { FirstFactorProof, Spent } from './pipeline.ts'
import { requirePasswordless } from './policy.ts'

type LoginCodeDeps = Pick<Deps, 'db' | 'guard' | 'audit' | 'clock' | 'config'>

export const loginOwner = (tenantId: string, userId: string): CodeOwner => ({
  tenantId,
  userId,
  purpose: 'login',
})

/**
 * A wrong guess counts against the code and against the account (CONTRACT §6); an unknown
 * address, a suspended user and a wrong, expired, burned or superseded code all answer
 * 401 `invalid_code` (SPEC note 2).
 */
export async function proveLoginCode(
  deps: LoginCodeDeps,
  tenant: Tenant,
  rawEmail: string,
  code: string,
  actor: Actor,
): Promise<FirstFactorProof> {
  requirePasswordless(tenant)
  const { email, attempt, found, user, cause, link } = await checkMailedCode(
    deps,
    tenant,
    rawEmail,
    code,
    'login',
    actor,
  )
  if (user) {
    return {
      user,
      email,
      attempt,
      via: 'passwordless',
      // CONTRACT §21: the hooks hear `magic_link` for the code a link carried.
      ...(link ? { hookMethod: 'magic_link' as const } : {}),
      spend: (tx) => spendLoginCode(deps, tx, tenant, user, code),
    }
  }
  await deps.audit.record(deps.db, tenant.id, actor, [
    {
      action: 'PasswordlessCodeFailed',
      userId: found?.id ?? null,
      email,
      metadata: { email, reason: cause },
    },
    {
      action: 'UserLoginFailed',
      userId: found?.id ?? null,
      email,
      metadata: { email, reason: 'invalid_code', via: 'passwordless' },
    },
  ])
  fail('invalid_code')
}

/**
 * Spends the login code (one atomic UPDATE, so of two parallel sign-ins with one code only
 * one passes), activates a Pending user and proves the address.
 */
async function spendLoginCode(
  deps: LoginCodeDeps,
  tx: Handle,
  tenant: Tenant,
  user: User,
  code: string,
): Promise<Spent> {
  // The user row is locked before the code row, in the order request-login-code takes them.
  await lockUserRow(tx, tenant.id, user.id)
  const spent = await spendCode(deps, tx, loginOwner(tenant.id, user.id), code)
  if (!spent.ok) fail('invalid_code')
  const updated = await markSignedInByCode(tx, tenant.id, user.id, deps.clock.now())
  if (!updated) fail('invalid_code')
  const email = user.emailNormalized
  const entries: AuditEntry[] = [{ action: 'PasswordlessCodeVerified', userId: user.id, email }]
  if (!user.emailVerified) {
    entries.push({
      action: 'UserEmailVerified',
      userId: user.id,
      email,
      metadata: { via: 'passwordless' },
    })
  }
  return { user: updated, entries }
}
