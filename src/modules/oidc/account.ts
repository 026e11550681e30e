// The provider's findAccount (CONTRACT §11): only an Active, live user of this tenant is
// an account; its claims by scope: `openid` → sub (the user id), `email` → email and
// email_verified, `profile` → updated_at (the profile names of §14 once users hold them).
// A user suspended or deleted after a grant gets no userinfo and no new tokens.
import type { Db } from '../../db/client.ts'
import { isUuid } from '../../lib/ids.ts'
import { findUserById } from '../users/queries.ts'

export function accountFinder(db: Db, tenantId: string) {
  return async (_ctx: unknown, sub: string) => {
    if (!isUuid(sub)) return undefined
    const user = await findUserById(db, tenantId, sub)
    if (user?.status !== 'Active') return undefined
    return {
      accountId: user.id,
      async claims() {
        return {
          sub: user.id,
          email: user.email,
          email_verified: user.emailVerified,
          updated_at: Math.floor(user.updatedAt.getTime() / 1000),
        }
      },
    }
  }
}
