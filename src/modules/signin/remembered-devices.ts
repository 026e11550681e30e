// Remembered devices (CONTRACT §21, tenant mfaRememberDays): a device that gave a second
// factor and asked to be remembered gets a device token (`rd_` + 256 random bits; only its
// SHA-256 is stored, tenant-scoped) and skips the second factor for that user for
// mfaRememberDays days. The pipeline asks `isRemembered` in one place (second-factor.ts);
// the token is minted in the session's transaction (pipeline.ts). Every end of a user's
// sessions (a password change or reset, a TOTP reset, logout-all, a suspension, a
// deletion: sessions/service.ts `revoking`) forgets the user's devices, as do "forget
// remembered devices" (DELETE me/remembered-devices) and mfaRememberDays set to 0.
import type { Db, Handle } from '../../db/client.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'
import type { Actor, AuditRecorder } from '../audit/recorder.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { deleteTenantDevices, deleteUserDevices, hasLiveDevice, insertDevice } from './queries.ts'

const DAY_MS = 86_400_000
const PREFIX = 'rd_'

/** Whether the tenant remembers devices at all. */
export const remembersDevices = (tenant: Pick<Tenant, 'mfaRememberDays'>): boolean =>
  tenant.mfaRememberDays > 0

/** Mints a device token for `userId` in `tx`, good for the tenant's mfaRememberDays. */
export async function rememberDevice(
  tx: Handle,
  tenant: Pick<Tenant, 'id' | 'mfaRememberDays'>,
  userId: string,
  now: Date,
): Promise<string> {
  const token = `${PREFIX}${randomToken()}`
  await insertDevice(tx, {
    tenantId: tenant.id,
    tokenHash: hashToken(token),
    userId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + tenant.mfaRememberDays * DAY_MS),
  })
  return token
}

/**
 * Whether `token` is a live remembered device of this user in this tenant: stored for
 * them, not expired, and younger than the tenant's current mfaRememberDays (a setting
 * lowered since shortens the devices it remembered). Anything else (another user's or
 * tenant's token, a forgotten one, garbage) is no device: the second factor is asked.
 */
export async function isRemembered(
  db: Handle,
  tenant: Pick<Tenant, 'id' | 'mfaRememberDays'>,
  userId: string,
  token: string | undefined,
  now: Date,
): Promise<boolean> {
  if (!token?.startsWith(PREFIX) || !remembersDevices(tenant)) return false
  return hasLiveDevice(db, {
    tenantId: tenant.id,
    tokenHash: hashToken(token),
    userId,
    now,
    since: new Date(now.getTime() - tenant.mfaRememberDays * DAY_MS),
  })
}

/** Forgets every remembered device of the user; answers how many there were (expired too). */
export const forgetUserDevices = deleteUserDevices

/** Forgets every remembered device of the tenant (mfaRememberDays set to 0). */
export const forgetTenantDevices = deleteTenantDevices

/**
 * "Forget remembered devices" (DELETE me/remembered-devices, the account page): every
 * remembered device of the signed-in user is forgotten, audited with their count.
 */
export async function forgetOwnDevices(
  // Deps' members by name: sessions/service.ts imports this file, and deps.ts imports it.
  deps: { audit: AuditRecorder; db: Db },
  tenantId: string,
  userId: string,
  actor: Actor,
): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const count = await forgetUserDevices(tx, tenantId, userId)
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'RememberedDevicesForgotten', userId, metadata: { count, reason: 'forgotten' } },
    ])
    return count
  })
}
