// The queries of the remembered_devices table (CONTRACT §21); no other file writes it.
// Every statement names the tenant. The rules are in remembered-devices.ts.
import type { Handle } from '../../db/client.ts'
import { and, eq, gt, lt } from '../../db/orm.ts'
import { rememberedDevices } from '../../db/schema.ts'

export interface DeviceRow {
  tenantId: string
  tokenHash: string
  userId: string
  createdAt: Date
  expiresAt: Date
}

/** Stores a device, dropping the user's expired ones first (the table holds the live ones). */
export async function insertDevice(tx: Handle, row: DeviceRow): Promise<void> {
  await tx
    .delete(rememberedDevices)
    .where(
      and(
        eq(rememberedDevices.tenantId, row.tenantId),
        eq(rememberedDevices.userId, row.userId),
        lt(rememberedDevices.expiresAt, row.createdAt),
      ),
    )
  await tx.insert(rememberedDevices).values(row)
}

/** Whether the user has a device of that hash, alive at `now` and made after `since`. */
export async function hasLiveDevice(
  db: Handle,
  where: { tenantId: string; tokenHash: string; userId: string; now: Date; since: Date },
): Promise<boolean> {
  const rows = await db
    .select({ userId: rememberedDevices.userId })
    .from(rememberedDevices)
    .where(
      and(
        eq(rememberedDevices.tenantId, where.tenantId),
        eq(rememberedDevices.tokenHash, where.tokenHash),
        eq(rememberedDevices.userId, where.userId),
        gt(rememberedDevices.expiresAt, where.now),
        gt(rememberedDevices.createdAt, where.since),
      ),
    )
    .limit(1)
  return rows.length === 1
}

/** Deletes the user's devices (expired too); answers how many. */
export async function deleteUserDevices(
  tx: Handle,
  tenantId: string,
  userId: string,
): Promise<number> {
  const gone = await tx
    .delete(rememberedDevices)
    .where(and(eq(rememberedDevices.tenantId, tenantId), eq(rememberedDevices.userId, userId)))
    .returning({ tokenHash: rememberedDevices.tokenHash })
  return gone.length
}

/** Deletes every device of the tenant; answers how many. */
export async function deleteTenantDevices(tx: Handle, tenantId: string): Promise<number> {
  const gone = await tx
    .delete(rememberedDevices)
    .where(eq(rememberedDevices.tenantId, tenantId))
    .returning({ tokenHash: rememberedDevices.tokenHash })
  return gone.length
}
