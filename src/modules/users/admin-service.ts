// User administration (SPEC, Administration; CONTRACT §2, PATCH users): the paged list,
// soft delete, role and status changes, and the TOTP reset. Every change that could leave
// the tenant without an active Admin is refused with 403 last_admin.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { displayEmail, normalizeEmail } from '../../lib/email.ts'
import { fail } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { Actor } from '../audit/recorder.ts'
import { deleteRecoveryCodes } from '../mfa/recovery-codes.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import { leaveAllOrganizations } from '../organizations/leave.ts'
import { userRoleNames } from '../roles/members.ts'
import { effectivePermissions, grants, isAdminRole, type Permission } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import {
  findUserAccess,
  findUserById,
  listUsers,
  lockActiveAdmins,
  lockLiveUser,
  type User,
  updateUser,
} from './queries.ts'
import { presentUser, type UserRecord } from './record.ts'
import type { ListUsersQuery, UserPatchBody } from './schemas.ts'

export interface UserPage {
  items: UserRecord[]
  nextCursor: string | null
}

export async function listUserPage(
  deps: Pick<Deps, 'reads'>,
  tenantId: string,
  query: ListUsersQuery,
): Promise<UserPage> {
  // A read that may lag: the replica serves it once caught up (db/replica.ts).
  const db = await deps.reads.reader()
  return readPage(
    query,
    ({ limit, after }) => listUsers(db, tenantId, { limit, afterId: after, locked: query.locked }),
    (user) => user,
  )
}

/**
 * Locks the tenant's active admins, then the target: the same order in every change, so
 * concurrent changes queue instead of deadlocking. An unknown, deleted or foreign user is
 * 404.
 */
async function lockTarget(tx: Handle, tenantId: string, userId: string) {
  const admins = await lockActiveAdmins(tx, tenantId)
  const user = await lockLiveUser(tx, tenantId, userId)
  if (!user) fail('not_found')
  return {
    user,
    /** Refuses the change when it takes away the last active Admin. */
    keepAnAdmin(after: { role: string; status: string } | 'deleted') {
      const staysAdmin = after !== 'deleted' && isAdminRole(after.role) && after.status === 'Active'
      if (admins.includes(user.id) && !staysAdmin && admins.length === 1) fail('last_admin')
    },
  }
}

/** How a deletion is recorded: the admin route's UserSoftDeleted, or SCIM's UserDeprovisioned. */
export interface DeleteOptions {
  action?: 'UserSoftDeleted' | 'UserDeprovisioned'
  metadata?: Record<string, unknown>
  /** Runs on the locked user before anything changes (SCIM's If-Match, RFC 7644 §3.14). */
  check?: (user: User) => void
}

/** Soft delete: the address is freed and every session ends; the purge removes the row. */
export async function deleteUser(
  deps: Pick<Deps, 'audit' | 'clock' | 'sessions'>,
  tenantId: string,
  userId: string,
  actor: Actor,
  options: DeleteOptions = {},
) {
  await deps.sessions.revoking(async (tx, revoke) => {
    const { user, keepAnAdmin } = await lockTarget(tx, tenantId, userId)
    options.check?.(user)
    keepAnAdmin('deleted')
    const now = deps.clock.now()
    await updateUser(tx, tenantId, user.id, { deletedAt: now, updatedAt: now })
    const ids = await revoke(tenantId, user.id, actor, 'user-deleted')
    const left = await leaveAllOrganizations(tx, tenantId, user)
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: options.action ?? 'UserSoftDeleted',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { by: 'admin', ...options.metadata, sessionsEnded: ids.length },
      },
      ...left,
    ])
  })
}

/** The profile fields PATCH users sets (CONTRACT §14); null clears one. */
const PROFILE_FIELDS = ['displayName', 'givenName', 'familyName', 'externalId', 'locale'] as const

/**
 * A change of a user: PATCH users' fields, and for SCIM (CONTRACT §14) the email and the
 * password hash as well (the admin route's body offers neither).
 */
export interface UserChange extends UserPatchBody {
  email?: string
  passwordHash?: string
}

/**
 * PATCH users/{userId}: role, status (Active or Suspended) and the profile fields.
 * Suspending ends the user's sessions. Fields that already hold the value are not changes;
 * with none, nothing is recorded. The audit row names every changed field; role and status
 * also with their old and new values, the profile fields without (personal data, which
 * the audit log keeps after an erasure). An API key may not set the Admin role (even where it is already held): a
 * leaked key could otherwise promote a user it controls and hold an Admin user token,
 * with the rights keys are refused (CONTRACT §4). Making an Admin, or an Admin a Member,
 * needs `baseRoleAuthority` (CONTRACT §17: an Admin's user token, or a key holding every
 * permission, for the demotion only); anyone else holding users:write is refused with
 * 403 permission_required, a key with api_key_not_allowed.
 */
export async function updateUserAccess(
  deps: Pick<Deps, 'audit' | 'clock' | 'db' | 'sessions'>,
  tenantId: string,
  userId: string,
  patch: UserPatchBody,
  caller: { actor: Actor; baseRoleAuthority: boolean },
): Promise<UserRecord> {
  const { actor } = caller
  if (patch.role !== undefined && isAdminRole(patch.role) && actor.type === 'apiKey') {
    fail('api_key_not_allowed', { message: 'An API key cannot grant the Admin role.' })
  }
  if (patch.role !== undefined && isAdminRole(patch.role) && !caller.baseRoleAuthority) {
    fail('permission_required', { message: 'Only an Admin may make a user an Admin.' })
  }
  const changed = await changeUser(deps, tenantId, userId, actor, (target) => {
    // Taking the Admin role away, too, is an Admin's act (checked on the locked row).
    if (isAdminRole(target.role) && patch.role !== undefined && !isAdminRole(patch.role)) {
      if (!caller.baseRoleAuthority) {
        fail(actor.type === 'apiKey' ? 'api_key_not_allowed' : 'permission_required', {
          message: 'Only an Admin may take the Admin role away.',
        })
      }
    }
    return patch
  })
  return presentUser(changed, await userRoleNames(deps.db, tenantId, userId))
}

/**
 * The one way a user is changed (PATCH users and SCIM alike, so SCIM can do nothing the
 * admin route's rules refuse): the user is locked with the tenant's active admins, `plan`
 * says what to change given the locked user (it may refuse, throwing), and the last-Admin
 * rule, the session ends of a suspension or a new password (CONTRACT §4) and the audit row
 * follow. A new address is unverified until proven; `via` is recorded in the metadata.
 */
export async function changeUser(
  deps: Pick<Deps, 'audit' | 'clock' | 'sessions'>,
  tenantId: string,
  userId: string,
  actor: Actor,
  plan: (user: User, tx: Handle) => UserChange | Promise<UserChange>,
  options: { via?: string } = {},
): Promise<User> {
  return deps.sessions.revoking(async (tx, revoke) => {
    const { user: target, keepAnAdmin } = await lockTarget(tx, tenantId, userId)
    const patch = await plan(target, tx)
    const role = patch.role ?? target.role
    const status = patch.status ?? target.status
    const profile = PROFILE_FIELDS.filter((f) => patch[f] !== undefined && patch[f] !== target[f])
    const changes: Record<string, { from: string; to: string }> = {}
    if (role !== target.role) changes.role = { from: target.role, to: role }
    if (status !== target.status) changes.status = { from: target.status, to: status }
    const email = patch.email === undefined ? target.email : displayEmail(patch.email)
    const emailNormalized = normalizeEmail(email)
    const account = [
      ...(email !== target.email ? ['email'] : []),
      ...(patch.passwordHash !== undefined ? ['password'] : []),
    ]
    const fields = [...Object.keys(changes), ...account, ...profile]
    if (fields.length === 0) return target
    keepAnAdmin({ role, status })
    const now = deps.clock.now()
    const updated = (await updateUser(tx, tenantId, target.id, {
      role,
      status,
      ...Object.fromEntries(profile.map((f) => [f, patch[f]])),
      ...(email !== target.email ? { email, emailNormalized } : {}),
      ...(emailNormalized !== target.emailNormalized ? { emailVerified: false } : {}),
      ...(patch.passwordHash !== undefined ? { passwordHash: patch.passwordHash } : {}),
      updatedAt: now,
    })) as User
    if (changes.status && status === 'Suspended') {
      await revoke(tenantId, target.id, actor, 'user-suspended')
    } else if (patch.passwordHash !== undefined) {
      await revoke(tenantId, target.id, actor, 'password-changed')
    }
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'UserUpdated',
        userId: target.id,
        email: target.emailNormalized,
        metadata: { fields, changes, ...(options.via ? { via: options.via } : {}) },
      },
    ])
    return updated
  })
}

/**
 * Resets a user's TOTP: the secret (active or half-enrolled) and the recovery codes are
 * removed, MfaTotpDisabled recorded and the user's sessions end (CONTRACT §4 and §9). A
 * user without any secret is left as is. An active factor removed is mailed about once it
 * committed. The path id is a plain string in the spec, so a malformed one is just unknown.
 */
/**
 * POST users/{id}/unlock (CONTRACT §21): the account's run of sign-in failures is forgotten
 * by the guard and lockedUntil cleared; audited UserUnlocked (also when no lock held, so
 * the act is on record). An unknown, deleted or foreign user is 404, nothing changed.
 */
export async function unlockUser(
  deps: Pick<Deps, 'audit' | 'clock' | 'db' | 'guard'>,
  tenantId: string,
  userId: string,
  actor: Actor,
): Promise<UserRecord> {
  const unlocked = await deps.db.transaction(async (tx) => {
    const user = await lockLiveUser(tx, tenantId, userId)
    if (!user) fail('not_found')
    const now = deps.clock.now()
    const wasLocked = user.lockedUntil !== null && user.lockedUntil.getTime() > Date.now()
    const changed = await updateUser(tx, tenantId, user.id, { lockedUntil: null, updatedAt: now })
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'UserUnlocked',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { wasLocked },
      },
    ])
    return changed ?? user
  })
  await deps.guard.unlock({ tenantId, email: unlocked.emailNormalized })
  return presentUser(unlocked, await userRoleNames(deps.db, tenantId, userId))
}

export async function disableUserTotp(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'mailer' | 'sessions'>,
  tenant: Tenant,
  userId: string,
  actor: Actor,
) {
  if (!isUuid(userId)) fail('not_found')
  const tenantId = tenant.id
  const disabled = await deps.sessions.revoking(async (tx, revoke) => {
    const user = await lockLiveUser(tx, tenantId, userId)
    if (!user) fail('not_found')
    if (!user.totpEnabled && user.totpSecretEnc === null) return undefined
    await deleteRecoveryCodes(tx, tenantId, user.id)
    await updateUser(tx, tenantId, user.id, {
      totpSecretEnc: null,
      totpEnabled: false,
      totpLastStep: null,
      updatedAt: deps.clock.now(),
    })
    const ids = await revoke(tenantId, user.id, actor, 'totp-reset')
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'MfaTotpDisabled',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { by: 'admin', wasEnabled: user.totpEnabled, sessionsEnded: ids.length },
      },
    ])
    return user.totpEnabled ? user : undefined
  })
  if (disabled) {
    // The administrator's address and browser are not the user's to see.
    sendSecurityAlert(deps, tenant, disabled, {
      event: 'totp_disabled',
      notes: [{ key: 'mail.alert.note.adminReset' }],
    })
  }
}

/**
 * POST users/{id}/impersonate (CONTRACT §22): an administrator's 15-minute session as an
 * Active user who is not an Admin and not the caller (403 impersonation_forbidden
 * otherwise; 404 for an unknown or deleted user). The route takes a user token only.
 * No escalation (CONTRACT §17): the caller must hold every tenant permission the user
 * holds, or the session would give it what its own role does not.
 */
export async function impersonateUser(
  deps: Pick<Deps, 'db' | 'sessions'>,
  tenant: Tenant,
  userId: string,
  reason: string,
  caller: { actor: Actor; permissions: readonly Permission[] },
) {
  const { actor } = caller
  if (!isUuid(userId)) fail('not_found')
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user || user.deletedAt) fail('not_found')
  if (actor.id === null || actor.id === user.id) fail('impersonation_forbidden')
  if (isAdminRole(user.role) || user.status !== 'Active') fail('impersonation_forbidden')
  const access = await findUserAccess(deps.db, tenant.id, user.id)
  const held = effectivePermissions(user.role, access?.rolePermissions ?? [])
  if (!held.every((p) => grants(caller.permissions, p))) fail('impersonation_forbidden')
  return deps.sessions.impersonate(tenant, user, { ...actor, id: actor.id }, reason)
}
