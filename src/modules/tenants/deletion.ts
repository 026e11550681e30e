// DELETE tenant (CONTRACT §9): an Admin closes the workspace. The tenant is soft-deleted:
// its slug names no tenant from now on (404 on every route, invitations 401), its sessions
// end, and the purge removes it with all its rows after USER_RETENTION_DAYS. No restore.
//
// The admin proves again who it is, like a sign-in and counted in the same budgets: its
// password (through the bounded hash queue), or, for an admin without a password, a login
// code (auth/request-login-code) spent by the deletion.
import { afterCommit } from '../../db/after-commit.ts'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { verifyPasswordTry } from '../../lib/passwords.ts'
import type { Actor } from '../audit/recorder.ts'
import { checkCode, spendCode } from '../codes/service.ts'
import { signerKeySeal } from '../import/signer-key.ts'
import { revokeTenantSessions } from '../sessions/revocations.ts'
import { loginOwner } from '../signin/login-code.ts'
import { findUserById, type User } from '../users/reads.ts'
import { findTenantById, softDeleteTenant, type Tenant } from './queries.ts'
import type { TenantDeleteBody } from './schemas.ts'

type DeletionDeps = Pick<
  Deps,
  'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'revocations' | 'tenants'
>

const ROUTE = 'tenant-delete'

export async function deleteTenant(
  deps: DeletionDeps,
  tenant: Tenant,
  adminId: string,
  input: TenantDeleteBody,
  actor: Actor,
): Promise<void> {
  if (input.confirmSlug !== tenant.slug) {
    fail('validation', {
      message: 'confirmSlug must be the slug of this workspace.',
      details: { issues: [{ path: 'body.confirmSlug', message: 'must equal the slug' }] },
    })
  }
  const admin = await findUserById(deps.db, tenant.id, adminId)
  if (!admin) fail('session_revoked')
  const attempt = await confirm(deps, tenant, admin, input, actor)

  await deps.db.transaction(async (tx) => {
    // Locked, so two deletions (or a deletion and a settings change) run one after the other.
    if (!(await findTenantById(tx, tenant.id, { lock: true }))) fail('tenant_not_found')
    if (input.code !== undefined) {
      const spent = await spendCode(deps, tx, loginOwner(tenant.id, admin.id), input.code)
      if (!spent.ok) fail('invalid_code')
    }
    await softDeleteTenant(tx, tenant.id, deps.clock.now())
    const ids = await revokeTenantSessions(tx, tenant.id, 'tenant-deleted')
    afterCommit(tx, () => deps.revocations.add(ids))
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'TenantSoftDeleted',
        userId: admin.id,
        metadata: {
          slug: tenant.slug,
          sessionsEnded: ids.length,
          confirmedWith: input.code === undefined ? 'password' : 'code',
        },
      },
    ])
  })
  await attempt.succeeded()
  // This instance forgets the tenant at once; the others within their cache's 2 seconds.
  deps.tenants.forget(tenant.slug)
  deps.tenants.forgetLogo(tenant.id)
}

/**
 * Checks the password or the code with a try reserved in the sign-in budgets (per
 * address, per account, and for passwords per (tenant, email, IP)); a failure is
 * recorded as UserLoginFailed and keeps its try. A code is checked here, spent later.
 */
async function confirm(
  deps: DeletionDeps,
  tenant: Tenant,
  admin: User,
  input: TenantDeleteBody,
  actor: Actor,
) {
  const email = admin.emailNormalized
  const byPassword = input.password !== undefined
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: byPassword ? 'password' : 'code',
  })
  let reason: 'invalid_credentials' | 'invalid_code' | undefined
  if (byPassword) {
    // An admin without a password is checked against the dummy hash: the same time.
    const seal = signerKeySeal(deps.cipher, tenant.id, admin.id)
    const ok = await verifyPasswordTry(attempt, admin.passwordHash, input.password as string, seal)
    if (!ok) reason = 'invalid_credentials'
  } else if (admin.passwordHash !== null) {
    // An admin with a password confirms with it; a code proves less than it.
    reason = 'invalid_credentials'
  } else {
    const check = await checkCode(deps, loginOwner(tenant.id, admin.id), input.code as string)
    if (!check.ok) reason = 'invalid_code'
  }
  if (reason) {
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'UserLoginFailed',
        userId: admin.id,
        email,
        metadata: { email, reason, route: ROUTE },
      },
    ])
    fail(reason, {
      message:
        reason === 'invalid_code'
          ? 'The code is wrong or has expired.'
          : 'The password is wrong. An admin without a password confirms with a login code.',
    })
  }
  return attempt
}
