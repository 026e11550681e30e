// The provider's findAccount (CONTRACT §11): only an Active, live user of this tenant is
// an account; its claims by scope: `openid` → sub (the user id), `email` → email and
// email_verified, `profile` → name (displayName), given_name, family_name where known, and
// updated_at; `roles` (CONTRACT §17, Tokens) → roles: the base role first, then the custom
// roles' names sorted, read when the scope is asked (so at every token and userinfo);
// `organizations` (CONTRACT §18) → organizations (the ids of the user's organizations in
// this tenant) and organization_roles (`"{orgId}:{role}"`), read the same way.
// A user suspended or deleted after a grant gets no userinfo and no new tokens.
import type { Db } from '../../db/client.ts'
import { isUuid } from '../../lib/ids.ts'
import { membershipClaims } from '../organizations/claims.ts'
import { userRoleNames } from '../roles/members.ts'
import { findUserById } from '../users/reads.ts'

export function accountFinder(db: Db, tenantId: string) {
  return async (_ctx: unknown, sub: string) => {
    if (!isUuid(sub)) return undefined
    const user = await findUserById(db, tenantId, sub)
    if (user?.status !== 'Active') return undefined
    return {
      accountId: user.id,
      async claims(
        _use?: string,
        scope = '',
      ): Promise<Record<string, string | number | boolean | string[]>> {
        const scopes = scope.split(' ')
        const roles: Record<string, string[]> = scopes.includes('roles')
          ? { roles: [user.role, ...(await userRoleNames(db, tenantId, user.id))] }
          : {}
        const organizations = scopes.includes('organizations')
          ? await membershipClaims(db, tenantId, user.id)
          : {}
        return {
          sub: user.id,
          email: user.email,
          email_verified: user.emailVerified,
          ...known({
            name: user.displayName,
            given_name: user.givenName,
            family_name: user.familyName,
          }),
          updated_at: Math.floor(user.updatedAt.getTime() / 1000),
          ...roles,
          ...organizations,
        }
      },
    }
  }
}

/** The claims that have a value: an unknown name is left out, never null (OIDC Core §5.3.2). */
function known(claims: Record<string, string | null>): Record<string, string> {
  return Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== null)) as Record<
    string,
    string
  >
}
