// Email verification (CONTRACT §9). auth/request-email-verification mails a 6-digit code
// to the signed-in user (a token, body `{}`) or to `{ email }` (answered like a reset
// request); an address already verified is sent nothing. auth/verify-email with a token
// proves the signed-in user's address and answers the user as GET /me does; without one,
// `{ email, code }` is a sign-in whose email factor is the code (signin/account-code.ts),
// with the second factor asked as for a reset. Either way a Pending user becomes Active
// and UserEmailVerified is recorded at the first proof.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { spendCode } from '../codes/service.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import {
  ACCOUNT_CODE_VIA,
  accountCodeOwner,
  accountSecondFactor,
  proveAccountCode,
  verifiedEntries,
} from '../signin/account-code.ts'
import { completeSignIn } from '../signin/pipeline.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { readMe } from '../users/me.ts'
import { findUserById, lockUserRow } from '../users/reads.ts'
import { markAddressProven } from '../users/writes.ts'
import { type RequestDeps, requestAccountCode } from './request.ts'
import type { RequestEmailVerificationBody, VerifyEmailBody } from './schemas.ts'
import { oneSecondFactor } from './second-factor-input.ts'

/** The signed-in user, when the request carried a token (auth mode 'optionalUser'). */
export type Caller = { userId: string } | undefined

export async function requestEmailVerification(
  deps: RequestDeps,
  tenant: Tenant,
  caller: Caller,
  input: RequestEmailVerificationBody,
  actor: Actor,
): Promise<void> {
  if (caller) {
    if (input.email !== undefined) withToken('email')
    const user = await findUserById(deps.db, tenant.id, caller.userId)
    if (!user) fail('session_revoked')
    return requestAccountCode(deps, tenant, user.email, 'verify', actor)
  }
  if (input.email === undefined) missing('email')
  return requestAccountCode(deps, tenant, input.email, 'verify', actor)
}

type VerifyDeps = Pick<
  Deps,
  'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'sessions' | 'tenants'
>

export async function verifyEmail(
  deps: VerifyDeps,
  tenant: Tenant,
  caller: Caller,
  input: VerifyEmailBody,
  actor: Actor,
) {
  if (caller) {
    for (const field of ['email', 'totpCode', 'recoveryCode'] as const) {
      if (input[field] !== undefined) withToken(field)
    }
    return verifySignedIn(deps, tenant, caller.userId, input.code, actor)
  }
  if (input.email === undefined) missing('email')
  oneSecondFactor(input)
  return signInByVerification(deps, tenant, { ...input, email: input.email }, actor)
}

/** With a token: the code proves the signed-in user's address; answers the user as /me. */
async function verifySignedIn(
  deps: VerifyDeps,
  tenant: Tenant,
  userId: string,
  code: string,
  actor: Actor,
) {
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  // A guess counts like any code verification (CONTRACT §6 per-account cap, §8 per address).
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email: user.emailNormalized,
    ip: actor.ip ?? '',
    factor: 'code',
  })
  const owner = accountCodeOwner(tenant.id, user.id, 'verify')
  const proven = await deps.db.transaction(async (tx) => {
    await lockUserRow(tx, tenant.id, user.id)
    // One atomic UPDATE spends a right code; a wrong one is counted (and commits).
    const spent = await spendCode(deps, tx, owner, code)
    if (!spent.ok) return false
    const updated = await markAddressProven(tx, tenant.id, user.id, {
      updatedAt: deps.clock.now(),
    })
    if (!updated) fail('session_revoked')
    await deps.audit.record(tx, tenant.id, actor, verifiedEntries(user, ACCOUNT_CODE_VIA.verify))
    return true
  })
  if (!proven) fail('invalid_code')
  await attempt.succeeded()
  return readMe(deps, tenant, user.id)
}

/** Without a token: `{ email, code }` signs in (the code is the email factor). */
async function signInByVerification(
  deps: VerifyDeps,
  tenant: Tenant,
  input: VerifyEmailBody & { email: string },
  actor: Actor,
): Promise<TokenEnvelope> {
  const proof = await proveAccountCode(deps, tenant, input.email, input.code, 'verify', actor)
  return completeSignIn(
    deps,
    tenant,
    proof,
    () => accountSecondFactor(deps, tenant, proof.user, input, actor),
    actor,
    { failure: { via: ACCOUNT_CODE_VIA.verify } },
  )
}

function withToken(field: string): never {
  fail('validation', {
    message: `With a token, leave out ${field}: the signed-in user's address is used.`,
    details: { issues: [{ path: `body.${field}`, message: 'must be left out with a token' }] },
  })
}

function missing(field: string): never {
  fail('validation', {
    message: `Without a token, ${field} is required.`,
    details: { issues: [{ path: `body.${field}`, message: 'is required without a token' }] },
  })
}
