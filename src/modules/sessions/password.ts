// Sign-in and sign-up with a password (SPEC, Authentication; CONTRACT §4 and §6).
import { afterCommit } from '../../db/after-commit.ts'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { codeMail } from '../codes/mail.ts'
import { issueCode } from '../codes/service.ts'
import { enforcingConnection } from '../federation/enforce.ts'
import { MEMBER_ROLE } from '../roles/permissions.ts'
import { provePassword } from '../signin/password.ts'
import { completeSignIn } from '../signin/pipeline.ts'
import { refusePasswords } from '../signin/policy.ts'
import { checkSecondFactor } from '../signin/second-factor.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { createUser, prepareChosenPassword } from '../users/service.ts'
import { updateUser } from '../users/writes.ts'
import type { LoginBody, SignupBody } from './schemas.ts'
import type { TokenEnvelope } from './service.ts'

/** POST auth/login: the password, then the second factor the policy asks (pipeline.ts). */
export async function loginWithPassword(
  deps: Pick<
    Deps,
    'audit' | 'breached' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'sessions'
  >,
  tenant: Tenant,
  input: LoginBody,
  actor: Actor,
): Promise<TokenEnvelope> {
  const proof = await provePassword(deps, tenant, input.email, input.password, actor)
  // CONTRACT §21: a right password found in the breach corpus still signs in, and marks
  // the user (passwordBreached) until a change or reset; looked up once, while unmarked.
  if (
    tenant.breachedPasswordPolicy === 'block' &&
    !proof.user.passwordBreached &&
    (await deps.breached.isBreached(input.password))
  ) {
    const marked = await updateUser(deps.db, tenant.id, proof.user.id, { passwordBreached: true })
    if (marked) proof.user = marked
  }
  return completeSignIn(
    deps,
    tenant,
    proof,
    () =>
      checkSecondFactor(deps, tenant, proof.user, {
        flow: 'password',
        totpCode: input.totpCode,
        recoveryCode: input.recoveryCode,
        emailOtpCode: input.emailOtpCode,
        deviceToken: input.deviceToken,
        actor,
      }),
    actor,
    { rememberDevice: input.rememberDevice },
  )
}

/** What signup answers where the tenant requires a verified address (CONTRACT §9). */
export interface VerificationRequired {
  ok: true
  verificationRequired: true
}

/**
 * POST auth/signup. Where the tenant requires a verified address, no session starts: the
 * user is created (Active, unverified), a verification code is mailed, and the answer says
 * so; auth/verify-email with `{ email, code }` then signs the user in.
 */
export async function signup(
  deps: Pick<Deps, 'audit' | 'breached' | 'clock' | 'config' | 'db' | 'mailer' | 'sessions'>,
  tenant: Tenant,
  input: SignupBody,
  actor: Actor,
  /** The hooks' `context.method`: `invite` when an invitation's acceptance signs up. */
  method: 'signup' | 'invite' = 'signup',
): Promise<TokenEnvelope | VerificationRequired> {
  refusePasswords(tenant, 400)
  // CONTRACT §12: an enforced domain's addresses sign in through their SSO connection only;
  // a password account made first would also sit in the colleague's way (its address
  // unconfirmed, SSO does not link to it).
  if (await enforcingConnection(deps.db, tenant.id, input.email)) fail('sso_required')
  // CONTRACT §21: the tenant's before_sign_up hook may refuse (nothing is created), before
  // the password is hashed and outside any transaction.
  const subject = async () => ({ email: input.email, role: MEMBER_ROLE, roles: [] })
  await deps.sessions.gate(tenant, 'before_sign_up', subject, actor, method)
  const claims = tenant.requireVerifiedEmail
    ? {}
    : await deps.sessions.claimsFor(tenant, subject, actor, method)
  const passwordHash = await prepareChosenPassword(deps, tenant, input.password, input.email)
  const verify = tenant.requireVerifiedEmail
  const result = await deps.db.transaction(async (tx) => {
    const user = await createUser(
      deps,
      tx,
      tenant,
      {
        email: input.email,
        passwordHash,
        role: MEMBER_ROLE,
        status: 'Active',
        emailVerified: false,
      },
      () => fail('email_taken'),
    )
    const who = { ...actor, type: 'user' as const, id: user.id }
    await deps.audit.record(tx, tenant.id, who, [
      {
        action: 'UserSignup',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { via: 'password', ...(verify ? { verificationRequired: true } : {}) },
      },
    ])
    if (!verify) return { envelope: await deps.sessions.start(tx, tenant, user, who, [], claims) }
    const owner = { tenantId: tenant.id, userId: user.id, purpose: 'verify' as const }
    const code = (await issueCode(deps, tx, owner)) as string
    // Sent once the user exists: a rolled-back signup mails nothing.
    const to = { to: user.email, locale: user.locale, requestLanguage: actor.language }
    afterCommit(tx, () => deps.mailer.deliver(codeMail('verify', to, tenant, code)))
    return {}
  })
  return result.envelope ?? { ok: true, verificationRequired: true }
}
