// The signed-in user's own account: delete it, change its password.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { verifyPasswordTry } from '../../lib/passwords.ts'
import type { Actor } from '../audit/recorder.ts'
import { signerKeySeal } from '../import/signer-key.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import { leaveAllOrganizations } from '../organizations/leave.ts'
import { effectivePermissions, isAdminRole } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { changeUser } from './admin-service.ts'
import { logoUrl } from './present.ts'
import { countOtherActiveAdmins, findMeRecord, findUserById, updateUser } from './queries.ts'
import type { ChangePasswordBody, MePatchBody } from './schemas.ts'
import { prepareChosenPassword } from './service.ts'

/**
 * The administrator an impersonation names (CONTRACT §22): id and address; an account
 * deleted since keeps its id, with an empty address.
 */
export async function impersonator(deps: Pick<Deps, 'db'>, tenant: Tenant, adminId: string) {
  const admin = await findUserById(deps.db, tenant.id, adminId)
  return { id: adminId, email: admin?.email ?? '' }
}

/** GET /me: one primary-key read; the tenant fields come from the tenant cache (2 s). */
export async function readMe(
  deps: Pick<Deps, 'db' | 'tenants' | 'config'>,
  tenant: Tenant,
  userId: string,
) {
  const [found, hasLogo] = await Promise.all([
    findMeRecord(deps.db, tenant.id, userId),
    deps.tenants.hasLogo(tenant.id),
  ])
  if (!found) fail('session_revoked')
  const { user, rolePermissions, passwordBreached, hasPassword } = found
  return {
    ...user,
    permissions: effectivePermissions(user.role, rolePermissions),
    passwordBreached,
    hasPassword,
    tenant: {
      id: tenant.id,
      slug: tenant.slug,
      name: tenant.name,
      plan: tenant.plan,
      mfaPolicy: tenant.mfaPolicy,
      authPolicy: tenant.authPolicy,
      logoUrl: logoUrl(deps.config, tenant.slug, hasLogo),
    },
  }
}

/**
 * PATCH /me: the user's own settings, through the one way a user is changed (admin-service.ts
 * `changeUser`: the audit row, nothing recorded when nothing changes). A user deleted
 * meanwhile is a revoked session, as GET /me answers it.
 */
export async function updateMe(
  deps: Pick<Deps, 'audit' | 'clock' | 'sessions'>,
  tenant: Tenant,
  userId: string,
  patch: MePatchBody,
  actor: Actor,
): Promise<void> {
  const change = patch.locale === undefined ? {} : { locale: patch.locale }
  await changeUser(deps, tenant.id, userId, actor, () => change, { via: 'me' })
}

/** Soft delete: the address is freed, every session ends; the purge removes the row later. */
export async function deleteOwnAccount(
  deps: Pick<Deps, 'audit' | 'clock' | 'sessions'>,
  tenant: Tenant,
  userId: string,
  actor: Actor,
) {
  await deps.sessions.revoking(async (tx, revoke) => {
    const user = await findUserById(tx, tenant.id, userId)
    if (!user) fail('session_revoked')
    if (isAdminRole(user.role) && (await countOtherActiveAdmins(tx, tenant.id, userId)) === 0) {
      fail('last_admin')
    }
    const now = deps.clock.now()
    await updateUser(tx, tenant.id, userId, { deletedAt: now, updatedAt: now })
    await revoke(tenant.id, userId, actor, 'user-deleted')
    const left = await leaveAllOrganizations(tx, tenant.id, user)
    await deps.audit.record(tx, tenant.id, actor, [
      { action: 'UserSoftDeleted', userId, email: user.emailNormalized, metadata: { by: 'self' } },
      ...left,
    ])
  })
}

/**
 * Changes the password and ends the user's other sessions (CONTRACT §4); the user is told
 * by a security alert once it committed (§9).
 */
export async function changePassword(
  deps: Pick<
    Deps,
    'audit' | 'breached' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'mailer' | 'sessions'
  >,
  tenant: Tenant,
  principal: { userId: string; sessionId: string },
  input: ChangePasswordBody,
  actor: Actor,
) {
  const user = await findUserById(deps.db, tenant.id, principal.userId)
  if (!user) fail('session_revoked')
  // Guessing the current password with a stolen access token counts like a login failure.
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email: user.emailNormalized,
    ip: actor.ip ?? '',
    factor: 'password',
  })
  const seal = signerKeySeal(deps.cipher, tenant.id, user.id)
  if (!(await verifyPasswordTry(attempt, user.passwordHash, input.currentPassword, seal))) {
    fail('invalid_credentials')
  }
  await attempt.succeeded()
  const passwordHash = await prepareChosenPassword(deps, tenant, input.newPassword, user.email)
  await deps.sessions.revoking(async (tx, revoke) => {
    const now = deps.clock.now()
    const updated = await updateUser(tx, tenant.id, user.id, {
      passwordHash,
      passwordBreached: false,
      updatedAt: now,
    })
    if (!updated) fail('session_revoked')
    const ids = await revoke(tenant.id, user.id, actor, 'password-changed', principal.sessionId)
    await deps.audit.record(tx, tenant.id, actor, [
      { action: 'UserPasswordChanged', userId: user.id, metadata: { sessionsEnded: ids.length } },
    ])
  })
  sendSecurityAlert(deps, tenant, user, {
    event: 'password_changed',
    ip: actor.ip,
    userAgent: actor.userAgent,
    language: actor.language,
  })
}
