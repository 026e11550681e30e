// Creating users and the password rules every creation path shares.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { displayEmail, normalizeEmail } from '../../lib/email.ts'
import { fail } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { hashPassword, isWeakPassword } from '../../lib/passwords.ts'
import type { BaseRole } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById, insertUser, type User } from './queries.ts'

export interface UserDraft {
  email: string
  passwordHash: string | null
  role: BaseRole
  status: 'Pending' | 'Active' | 'Suspended'
  emailVerified: boolean
  /** The profile fields (CONTRACT §14), set by SCIM provisioning; null when absent. */
  profile?: Partial<Pick<User, 'displayName' | 'givenName' | 'familyName' | 'externalId'>>
}

/** Refuses a weak password (CONTRACT §4) and hashes an acceptable one. */
export async function preparePassword(password: string, email: string, tenantName: string) {
  if (isWeakPassword(password, { email, tenantName })) fail('password_too_weak')
  return hashPassword(password)
}

/**
 * A password a person chooses (sign-up, invitation, change, reset): the weak-password rule
 * first (its `password_too_weak` stands), then, under the tenant's breachedPasswordPolicy
 * `block`, the breach corpus (CONTRACT §21): 400 `validation` with reason
 * `password_breached`.
 */
export async function refuseBreachedPassword(
  deps: Pick<Deps, 'breached'>,
  tenant: Pick<Tenant, 'breachedPasswordPolicy'>,
  password: string,
): Promise<void> {
  if (tenant.breachedPasswordPolicy !== 'block') return
  if (await deps.breached.isBreached(password)) fail('password_breached')
}

/** preparePassword for a password a person chooses: the breach corpus checked too. */
export async function prepareChosenPassword(
  deps: Pick<Deps, 'breached'>,
  tenant: Pick<Tenant, 'breachedPasswordPolicy' | 'name'>,
  password: string,
  email: string,
): Promise<string> {
  if (isWeakPassword(password, { email, tenantName: tenant.name })) fail('password_too_weak')
  await refuseBreachedPassword(deps, tenant, password)
  return hashPassword(password)
}

/** Inserts a user; `onTaken` decides what a taken address answers. */
export async function createUser(
  deps: Pick<Deps, 'clock'>,
  tx: Handle,
  tenant: Tenant,
  draft: UserDraft,
  onTaken: () => never,
): Promise<User> {
  const now = deps.clock.now()
  const user = await insertUser(tx, {
    tenantId: tenant.id,
    id: uuidv7(now.getTime()),
    email: displayEmail(draft.email),
    emailNormalized: normalizeEmail(draft.email),
    passwordHash: draft.passwordHash,
    status: draft.status,
    role: draft.role,
    emailVerified: draft.emailVerified,
    ...draft.profile,
    createdAt: now,
    updatedAt: now,
  })
  return user ?? onTaken()
}

/** The tenant's live user `userId`, or undefined (another module's read of a user). */
export function userById(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  userId: string,
): Promise<User | undefined> {
  return findUserById(deps.db, tenantId, userId)
}
