// TOTP enrolment, in two steps (SPEC, MFA): begin (a new secret, its otpauth URI and a QR
// code), then verify a code from the authenticator to activate the factor.
//   mfa/totp/enroll, mfa/totp/verify       for a signed-in user (Bearer)
//   auth/totp/initial-enroll, initial-verify for a user who must enrol before signing in
//     (SPEC note 4), proving a password or a login code; initial-verify signs in.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { proveLoginCode } from '../signin/login-code.ts'
import { provePassword } from '../signin/password.ts'
import { completeSignIn, type FirstFactorProof } from '../signin/pipeline.ts'
import { checkPendingTotp, enrolledEntries, pendingStep } from '../signin/totp.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById, type User } from '../users/reads.ts'
import { activateTotp, storePendingTotp } from '../users/writes.ts'
import { replaceRecoveryCodes } from './recovery-codes.ts'
import type { Enrolment, InitialEnrollBody } from './schemas.ts'
import { enrolmentView, newTotpSecret, sealTotpSecret } from './totp.ts'

/** Stores a new pending secret for `user`; 409 while TOTP is active (CONTRACT §5). */
async function begin(
  deps: Pick<Deps, 'cipher' | 'clock' | 'db'>,
  tenant: Tenant,
  user: User,
): Promise<Enrolment> {
  if (user.totpEnabled) fail('already_enrolled')
  const secret = newTotpSecret()
  const sealed = sealTotpSecret(deps.cipher, tenant.id, user.id, secret)
  const stored = await storePendingTotp(deps.db, tenant.id, user.id, sealed, deps.clock.now())
  if (!stored) fail('already_enrolled')
  return enrolmentView(tenant.name, user.email, secret)
}

/** POST mfa/totp/enroll. */
export async function enrollSignedIn(
  deps: Pick<Deps, 'cipher' | 'clock' | 'db'>,
  tenant: Tenant,
  userId: string,
) {
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  return begin(deps, tenant, user)
}

/**
 * POST mfa/totp/verify: activates the pending secret with a code from the authenticator;
 * ten new recovery codes replace any old ones in the same transaction (CONTRACT §9), and
 * the user is told by a security alert once it committed.
 */
export async function verifySignedIn(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'mailer'>,
  tenant: Tenant,
  userId: string,
  code: string,
  actor: Actor,
): Promise<string[]> {
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  if (user.totpEnabled) fail('already_enrolled')
  const step = pendingStep(deps, user, code)
  if (step === null || !user.totpSecretEnc) fail('invalid_mfa_code')
  const sealed = user.totpSecretEnc
  const recoveryCodes = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now()
    const activated = await activateTotp(tx, tenant.id, user.id, sealed, step, { updatedAt: now })
    if (!activated) fail('invalid_mfa_code')
    const codes = await replaceRecoveryCodes(deps, tx, tenant.id, user.id)
    await deps.audit.record(tx, tenant.id, actor, enrolledEntries(user, 'mfa/totp/verify'))
    return codes
  })
  sendSecurityAlert(deps, tenant, user, {
    event: 'totp_enrolled',
    ip: actor.ip,
    userAgent: actor.userAgent,
    language: actor.language,
  })
  return recoveryCodes
}

/** CONTRACT §5: the initial-* routes answer 403 `mfa_disabled` when the policy is Disabled. */
function requireMfa(tenant: Tenant): void {
  if (tenant.mfaPolicy === 'Disabled') fail('mfa_disabled')
}

/**
 * The first factor of the initial-* routes: exactly one of a password or a login code (the
 * schema refuses both or neither; SPEC note 4). A login code is checked, not spent.
 */
function proveFirstFactor(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard'>,
  tenant: Tenant,
  input: InitialEnrollBody,
  actor: Actor,
  route: string,
): Promise<FirstFactorProof> {
  if (input.password !== undefined) {
    return provePassword(deps, tenant, input.email, input.password, actor, route)
  }
  return proveLoginCode(deps, tenant, input.email, input.loginCode as string, actor)
}

/**
 * POST auth/totp/initial-enroll. The first factor is proven (a login code is checked, not
 * spent) before anything about the account is told, then a pending secret is stored.
 */
export async function initialEnroll(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard'>,
  tenant: Tenant,
  input: InitialEnrollBody,
  actor: Actor,
): Promise<Enrolment> {
  requireMfa(tenant)
  const proof = await proveFirstFactor(deps, tenant, input, actor, 'totp/initial-enroll')
  // Not a sign-in: the try is given back, the account's run of failures goes on.
  await proof.attempt.release()
  return begin(deps, tenant, proof.user)
}

/**
 * POST auth/totp/initial-verify: the first factor again, then a code of the pending
 * secret as the second factor; on success TOTP is active, ten new recovery codes replace
 * any old ones, a login code is spent and a session starts, all in one transaction
 * (CONTRACT §5 and §9). The alert that TOTP was enrolled is mailed once it committed.
 */
export async function initialVerify(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'sessions'>,
  tenant: Tenant,
  input: InitialEnrollBody & { code: string; rememberDevice?: boolean },
  actor: Actor,
): Promise<TokenEnvelope & { recoveryCodes: string[] }> {
  requireMfa(tenant)
  const route = 'totp/initial-verify'
  const proof = await proveFirstFactor(deps, tenant, input, actor, route)
  let recoveryCodes: string[] = []
  const envelope = await completeSignIn(
    deps,
    tenant,
    proof,
    async () => {
      const activation = checkPendingTotp(deps, proof.user, input.code, route)
      return {
        spend: async (tx) => {
          const spent = await activation.spend(tx)
          recoveryCodes = await replaceRecoveryCodes(deps, tx, tenant.id, proof.user.id)
          return { ...spent, alerts: [...(spent.alerts ?? []), { event: 'totp_enrolled' }] }
        },
      }
    },
    actor,
    { failure: { via: proof.via, route }, rememberDevice: input.rememberDevice },
  )
  return { ...envelope, recoveryCodes }
}
