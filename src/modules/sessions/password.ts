// Sign-in and sign-up with a password (SPEC, Authentication; CONTRACT §4 and §6).
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { hashPassword, needsRehash, verifyPassword } from '../../lib/passwords.ts'
import type { Actor } from '../audit/recorder.ts'
import { checkSecondFactor } from '../mfa/factors.ts'
import type { Tenant } from '../tenants/store.ts'
import { createUser, preparePassword } from '../users/service.ts'
import { findUserByEmail, updateUser } from '../users/store.ts'
import type { TokenEnvelope } from './service.ts'

export interface LoginInput {
  email: string
  password: string
  totpCode?: string
  emailOtpCode?: string
}

export async function loginWithPassword(
  deps: Deps,
  tenant: Tenant,
  input: LoginInput,
  actor: Actor,
): Promise<TokenEnvelope> {
  // SPEC note 9: PasswordlessOnly refuses passwords, whoever asks.
  if (tenant.authPolicy === 'PasswordlessOnly') fail('password_login_disabled')
  const email = normalizeEmail(input.email)
  // The try is reserved before the hash is checked, so a parallel burst gets no more
  // tries than the budget allows (CONTRACT §6).
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: 'password',
  })
  const user = await findUserByEmail(deps.db, tenant.id, email)
  // Unknown addresses are checked against a dummy hash: same answer, same time.
  const passwordOk = await verifyPassword(user?.passwordHash ?? null, input.password)

  const failed = async (
    reason: 'invalid_credentials' | 'account_suspended' | 'invalid_mfa_code',
  ) => {
    await deps.audit.record(deps.db, tenant.id, actor, [
      { action: 'UserLoginFailed', userId: user?.id ?? null, email, metadata: { email, reason } },
    ])
  }
  if (!user || !passwordOk || user.status === 'Pending') {
    await failed('invalid_credentials')
    fail('invalid_credentials')
  }
  if (user.status === 'Suspended') {
    await failed('account_suspended')
    fail('account_suspended')
  }

  let factorEntries: Awaited<ReturnType<typeof checkSecondFactor>>
  try {
    factorEntries = await checkSecondFactor(deps, tenant, user, {
      flow: 'password',
      totpCode: input.totpCode,
      emailOtpCode: input.emailOtpCode,
      actor,
    })
  } catch (error) {
    if (error instanceof AppError && error.reason === 'invalid_mfa_code') {
      await failed('invalid_mfa_code')
    } else {
      // Asking for the second factor is not a failure: the try is given back, but the
      // account's run of failures is not reset (that would let TOTP guesses go uncounted).
      await attempt.release()
    }
    throw error
  }
  await attempt.succeeded()

  const rehash = user.passwordHash && needsRehash(user.passwordHash)
  const newHash = rehash ? await hashPassword(input.password) : undefined
  return deps.db.transaction(async (tx) => {
    const now = deps.clock.now()
    const updated = await updateUser(tx, tenant.id, user.id, {
      lastLoginAt: now,
      ...(newHash ? { passwordHash: newHash } : {}),
    })
    if (!updated) fail('invalid_credentials')
    // A suspension that committed since the status check above is seen here (the UPDATE
    // read the latest row); one that commits later revokes this session after us.
    if (updated.status !== 'Active') fail('account_suspended')
    await deps.audit.record(tx, tenant.id, { ...actor, type: 'user', id: user.id }, [
      ...factorEntries,
      { action: 'UserLogin', userId: user.id, email, metadata: { via: 'password' } },
    ])
    return deps.sessions.start(tx, tenant, updated, { ...actor, type: 'user', id: user.id })
  })
}

export async function signup(
  deps: Deps,
  tenant: Tenant,
  input: { email: string; password: string },
  actor: Actor,
): Promise<TokenEnvelope> {
  if (tenant.authPolicy === 'PasswordlessOnly') fail('password_login_disabled', { status: 400 })
  await deps.limits.hit('signup', actor.ip ?? '')
  const passwordHash = await preparePassword(input.password, input.email, tenant.name)
  return deps.db.transaction(async (tx) => {
    const user = await createUser(
      deps,
      tx,
      tenant,
      { email: input.email, passwordHash, role: 'Member', status: 'Active', emailVerified: false },
      () => fail('email_taken'),
    )
    const who = { ...actor, type: 'user' as const, id: user.id }
    await deps.audit.record(tx, tenant.id, who, [
      {
        action: 'UserSignup',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { via: 'password' },
      },
    ])
    return deps.sessions.start(tx, tenant, user, who)
  })
}
