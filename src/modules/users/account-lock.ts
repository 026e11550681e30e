// The account failure lock as the user record shows it (CONTRACT §21 lockedUntil): the
// sign-in guard (lib/ratelimit.ts) keeps the count and refuses; this store writes the end
// of the lock it refused with, and clears it when a sign-in succeeds.
import type { Db } from '../../db/client.ts'
import type { AccountLockStore } from '../../lib/ratelimit.ts'
import { clearLockedUntilByEmail, storeLockedUntil } from './queries.ts'

export function accountLockStore(db: Db): AccountLockStore {
  return {
    locked: (tenantId, email, until) => storeLockedUntil(db, tenantId, email, until),
    cleared: (tenantId, email) => clearLockedUntilByEmail(db, tenantId, email),
  }
}
