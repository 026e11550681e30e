// POST me/password: a first password for an account that has none (one that signed up
// through a social connection, SSO, the SPEC identity provider or an emailed code). PATCH
// me/password stays as the SPEC has it, with `currentPassword`, which such a user does not
// have. Setting one adds a way into the account, so it asks what adding a passkey asks
// (CONTRACT §16: a factor proved in the last 10 minutes) and keeps every rule of a chosen
// password (SPEC limits 12 to 1024, not weak, not breached: §21); a PasswordlessOnly tenant
// takes none (SPEC note 9, 403 as the reset answers), nor does an address whose domain an
// enforcing SSO connection owns (§12, as signup and invitations: Admins excepted). As the
// change, it ends the user's other sessions and mails a security alert (§9).
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { ssoRequired } from '../federation/enforce.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import { refusePasswords } from '../signin/policy.ts'
import { requireRecentAuthentication } from '../stepup/recent.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById, setFirstPasswordHash } from './queries.ts'
import type { SetPasswordBody } from './schemas.ts'
import { prepareChosenPassword } from './service.ts'

type FirstPasswordDeps = Pick<
  Deps,
  'audit' | 'breached' | 'clock' | 'config' | 'db' | 'mailer' | 'sessions'
>

/**
 * Checked in this order, each refusal before anything is written: the tenant's policy (403
 * `password_login_disabled`), the recent proof (401 `reauthentication_required`), a password
 * already there (409 `password_exists`), enforced SSO (403 `sso_required`), the password's
 * rules (400 `password_too_weak` / `password_breached`).
 */
export async function setFirstPassword(
  deps: FirstPasswordDeps,
  tenant: Tenant,
  principal: { userId: string; sessionId: string },
  input: SetPasswordBody,
  actor: Actor,
): Promise<void> {
  refusePasswords(tenant, 403)
  await requireRecentAuthentication(deps, tenant.id, principal)
  const user = await findUserById(deps.db, tenant.id, principal.userId)
  if (!user) fail('session_revoked')
  if (user.passwordHash !== null) fail('password_exists')
  if (await ssoRequired(deps.db, tenant.id, user.emailNormalized, user)) fail('sso_required')
  const passwordHash = await prepareChosenPassword(deps, tenant, input.newPassword, user.email)
  await deps.sessions.revoking(async (tx, revoke) => {
    // Only while the account still has none: a racing set or reset wrote first.
    const now = deps.clock.now()
    const updated = await setFirstPasswordHash(tx, tenant.id, user.id, passwordHash, now)
    if (!updated) {
      fail((await findUserById(tx, tenant.id, user.id)) ? 'password_exists' : 'session_revoked')
    }
    const ids = await revoke(tenant.id, user.id, actor, 'password-set', principal.sessionId)
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'UserPasswordChanged',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { via: 'set', sessionsEnded: ids.length },
      },
    ])
  })
  sendSecurityAlert(deps, tenant, user, {
    event: 'password_set',
    ip: actor.ip,
    userAgent: actor.userAgent,
    language: actor.language,
  })
}
