// First factor: a password (SPEC, auth/login; CONTRACT §4 and §6). Unknown addresses are
// checked against a dummy hash, so they answer the same and take the same time.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { fail } from '../../lib/errors.ts'
import { hashPassword, needsRehash, verifyPasswordTry } from '../../lib/passwords.ts'
import type { SignInTry } from '../../lib/ratelimit.ts'
import type { Actor } from '../audit/recorder.ts'
import { signerKeySeal } from '../import/signer-key.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail, type User } from '../users/reads.ts'
import { stampLastLogin, updateUser } from '../users/writes.ts'
import type { FirstFactorProof, Spent } from './pipeline.ts'
import { refusePasswords } from './policy.ts'

type PasswordDeps = Pick<Deps, 'db' | 'guard' | 'audit' | 'clock' | 'cipher'>

/**
 * Checks a password; a wrong one, an unknown or Pending address, a Suspended user and an
 * unverified address where the tenant requires a verified one (403) are audited as
 * UserLoginFailed (with `route` when the route is not auth/login). The try is
 * reserved before the hash is checked, so a parallel burst gets no more tries than the
 * budgets allow.
 */
export async function provePassword(
  deps: PasswordDeps,
  tenant: Tenant,
  rawEmail: string,
  password: string,
  actor: Actor,
  route?: string,
): Promise<FirstFactorProof> {
  refusePasswords(tenant)
  const email = normalizeEmail(rawEmail)
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: 'password',
  })
  const user = await findUserByEmail(deps.db, tenant.id, email)
  const seal = user && signerKeySeal(deps.cipher, tenant.id, user.id)
  const passwordOk = await verifyPasswordTry(attempt, user?.passwordHash ?? null, password, seal)
  const reason =
    !user || !passwordOk || user.status === 'Pending'
      ? 'invalid_credentials'
      : user.status === 'Suspended'
        ? 'account_suspended'
        : undefined
  if (!user || reason) {
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'UserLoginFailed',
        userId: user?.id ?? null,
        email,
        metadata: { email, reason, ...(route ? { route } : {}) },
      },
    ])
    fail(reason ?? 'invalid_credentials')
  }
  if (tenant.requireVerifiedEmail && !user.emailVerified) {
    await refuseUnverified(deps, tenant, user, email, attempt, actor, route)
  }
  return {
    user,
    email,
    attempt,
    via: 'password',
    spend: (tx) => stampLogin(deps, tx, tenant, user, password),
  }
}

/**
 * CONTRACT §9, requireVerifiedEmail: the right password of an unverified address answers
 * 403 `email_not_verified`, before any second factor is asked. The password was right, so
 * the try is given back (like a second factor asked for), without ending the account's run
 * of failures; the refusal is audited as a failed sign-in.
 */
async function refuseUnverified(
  deps: PasswordDeps,
  tenant: Tenant,
  user: User,
  email: string,
  attempt: SignInTry,
  actor: Actor,
  route: string | undefined,
): Promise<never> {
  await attempt.release()
  await deps.audit.record(deps.db, tenant.id, actor, [
    {
      action: 'UserLoginFailed',
      userId: user.id,
      email,
      metadata: { email, reason: 'email_not_verified', ...(route ? { route } : {}) },
    },
  ])
  fail('email_not_verified')
}

/**
 * In the session's transaction: the login time, and a hash made under older parameters
 * replaced (rare: only after the parameters change, so hashing here costs nothing usual).
 * A suspension that committed since the password was checked is seen here: the UPDATE
 * reads the latest row.
 */
async function stampLogin(
  deps: PasswordDeps,
  tx: Handle,
  tenant: Tenant,
  user: User,
  password: string,
): Promise<Spent> {
  const rehash = user.passwordHash !== null && needsRehash(user.passwordHash)
  const passwordHash = rehash ? await hashPassword(password) : undefined
  const now = deps.clock.now()
  const updated = passwordHash
    ? await updateUser(tx, tenant.id, user.id, { lastLoginAt: now, passwordHash })
    : await stampLastLogin(tx, tenant.id, user.id, now)
  if (!updated) fail('invalid_credentials')
  if (updated.status !== 'Active') fail('account_suspended')
  return { user: updated, entries: [] }
}
