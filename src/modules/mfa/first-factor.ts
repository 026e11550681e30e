// The first factor of the MFA routes that sign in without a session: initial-enroll,
// initial-verify (a password or a login code, exactly one: SPEC note 4) and
// request-email-otp (a password: note 7). Failures count like any sign-in failure
// (CONTRACT §6) and are audited as UserLoginFailed with their reason.
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { fail } from '../../lib/errors.ts'
import { verifyPassword } from '../../lib/passwords.ts'
import type { SignInTry } from '../../lib/ratelimit.ts'
import type { Actor } from '../audit/recorder.ts'
import { proveLoginCode } from '../passwordless/service.ts'
import type { Tenant } from '../tenants/store.ts'
import { findUserByEmail, type User } from '../users/store.ts'

export interface FirstFactorProof {
  user: User
  email: string
  attempt: SignInTry
  via: 'password' | 'passwordless'
  /** The login code to spend once the whole sign-in succeeds (CONTRACT §5). */
  loginCode?: string
}

/** A password, checked like auth/login: same answers, same timing for unknown addresses. */
export async function provePassword(
  deps: Deps,
  tenant: Tenant,
  rawEmail: string,
  password: string,
  actor: Actor,
  route: string,
): Promise<FirstFactorProof> {
  // SPEC note 9: PasswordlessOnly refuses passwords.
  if (tenant.authPolicy === 'PasswordlessOnly') fail('password_login_disabled')
  const email = normalizeEmail(rawEmail)
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: 'password',
  })
  const user = await findUserByEmail(deps.db, tenant.id, email)
  const passwordOk = await verifyPassword(user?.passwordHash ?? null, password)
  const reason =
    !user || !passwordOk || user.status === 'Pending'
      ? 'invalid_credentials'
      : user.status === 'Suspended'
        ? 'account_suspended'
        : undefined
  if (!user || reason) {
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'UserLoginFailed',
        userId: user?.id ?? null,
        email,
        metadata: { email, reason, route },
      },
    ])
    fail(reason ?? 'invalid_credentials')
  }
  return { user, email, attempt, via: 'password' }
}

/** Exactly one of a password or a login code (the schema refuses both or neither). */
export async function proveFirstFactor(
  deps: Deps,
  tenant: Tenant,
  input: { email: string; password?: string; loginCode?: string },
  actor: Actor,
  route: string,
): Promise<FirstFactorProof> {
  if (input.password !== undefined) {
    return provePassword(deps, tenant, input.email, input.password, actor, route)
  }
  const loginCode = input.loginCode as string
  const proof = await proveLoginCode(deps, tenant, input.email, loginCode, actor)
  return { ...proof, via: 'passwordless', loginCode }
}
