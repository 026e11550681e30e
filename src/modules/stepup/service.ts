// POST me/reauthenticate and POST me/reauthenticate/options (CONTRACT §16): the signed-in
// session proves a sign-in factor again, which lets it change how the account signs in for
// the next 10 minutes (stepup/recent.ts). The proofs are the sign-in pipeline's own checks
// (signin/): a try is reserved in the sign-in failure budgets (§6, §8) before anything is
// compared, a failure is audited as UserLoginFailed and keeps its try, and what a proof
// spends (a TOTP step, a recovery or login code, a passkey's counter) is spent in the one
// transaction that stamps the session. Only that session: the user's others keep their time.
// An authenticator code or a recovery code on top of the sign-in's own factor is a second
// factor: the session is marked as having proved one (CONTRACT §18: an organization with
// mfaRequired asks it, and the hosted pages ask for it this way, web/pages/authorize-organization.ts).
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { AppError, fail } from '../../lib/errors.ts'
import type { SignInTry } from '../../lib/ratelimit.ts'
import type { Actor } from '../audit/recorder.ts'
import { listPasskeys } from '../passkeys/credentials.ts'
import { issueChallenge, requirePasskeys } from '../passkeys/service.ts'
import { CHALLENGE_TTL_SECONDS, relyingParty, webauthnLibrary } from '../passkeys/webauthn.ts'
import { markSecondFactor, stampReauthentication } from '../sessions/proofs.ts'
import type { RevokeUserSessions } from '../sessions/service.ts'
import { proveLoginCode } from '../signin/login-code.ts'
import { provePasskey } from '../signin/passkey.ts'
import { provePassword } from '../signin/password.ts'
import type { SecondFactorProof, Spent } from '../signin/pipeline.ts'
import { checkRecoveryCode } from '../signin/recovery-code.ts'
import { checkTotp } from '../signin/totp.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById, type User } from '../users/reads.ts'
import type { ReauthenticateBody } from './schemas.ts'

/** `route` of the UserLoginFailed rows a wrong proof records. */
const ROUTE = 'reauthenticate'

type ReauthDeps = Pick<
  Deps,
  'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'mailer' | 'sessions'
>

/** A factor proven but not spent, with its try reserved in the failure budgets. */
interface Proof {
  attempt: SignInTry
  spend(tx: Handle, revoke: RevokeUserSessions): Promise<Spent>
  /** Records a refusal met while spending (a parallel use spent the factor first). */
  refused(error: unknown): Promise<void>
}

/** POST me/reauthenticate. */
export async function reauthenticate(
  deps: ReauthDeps,
  tenant: Tenant,
  principal: { userId: string; sessionId: string },
  body: ReauthenticateBody,
  actor: Actor,
): Promise<void> {
  const user = await findUserById(deps.db, tenant.id, principal.userId)
  if (!user) fail('session_revoked')
  const proof = await prove(deps, tenant, user, body, actor)
  try {
    // signingIn: the alert of a recovery code used is mailed only once this committed.
    await deps.sessions.signingIn(async (tx, revoke) => {
      const spent = await proof.spend(tx, revoke)
      const now = deps.clock.now()
      if (!(await stampReauthentication(tx, tenant.id, user.id, principal.sessionId, now))) {
        fail('session_revoked')
      }
      if (body.totpCode !== undefined || body.recoveryCode !== undefined) {
        await markSecondFactor(tx, tenant.id, principal.sessionId)
      }
      for (const alert of spent.alerts ?? []) {
        deps.sessions.alertOnCommit(tx, tenant, user, {
          ...alert,
          ip: actor.ip,
          userAgent: actor.userAgent,
        })
      }
      await deps.audit.record(tx, tenant.id, actor, spent.entries)
    })
  } catch (error) {
    // A session that ended meanwhile is no failed proof: the try is given back.
    if (error instanceof AppError && error.reason === 'session_revoked') {
      await proof.attempt.release()
    } else {
      await proof.refused(error)
    }
    throw error
  }
  await proof.attempt.succeeded()
}

/** The one proof the body holds (the schema lets exactly one through), checked unspent. */
async function prove(
  deps: ReauthDeps,
  tenant: Tenant,
  user: User,
  body: ReauthenticateBody,
  actor: Actor,
): Promise<Proof> {
  const email = user.emailNormalized
  const nothing = async () => {}
  if (body.password !== undefined) {
    const proof = await provePassword(deps, tenant, email, body.password, actor, ROUTE)
    return { attempt: proof.attempt, spend: proof.spend, refused: nothing }
  }
  if (body.code !== undefined) {
    const proof = await proveLoginCode(deps, tenant, email, body.code, actor)
    return { attempt: proof.attempt, spend: proof.spend, refused: nothing }
  }
  if (body.response !== undefined) {
    requirePasskeys(tenant)
    const proof = await provePasskey(deps, tenant, body.response, actor, user)
    return { attempt: proof.attempt, spend: proof.spend, refused: proof.recordRefusal }
  }
  const method = body.totpCode !== undefined ? 'totp' : 'recovery_code'
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: 'code',
  })
  const refused = async (error: unknown) => {
    if (!(error instanceof AppError) || error.reason !== 'invalid_mfa_code') return
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'UserLoginFailed',
        userId: user.id,
        email,
        metadata: { email, reason: 'invalid_mfa_code', method, route: ROUTE },
      },
    ])
  }
  let second: SecondFactorProof
  try {
    second =
      body.totpCode !== undefined
        ? checkTotp(deps, user, body.totpCode, 'reauthenticate')
        : await checkRecoveryCode(deps, user, body.recoveryCode as string)
  } catch (error) {
    await refused(error)
    throw error
  }
  return { attempt, spend: (tx) => second.spend(tx), refused }
}

/**
 * POST me/reauthenticate/options: a challenge of the `reauthentication` ceremony bound to
 * the tenant and the user, listing the user's passkeys (only those can answer it). A user
 * without passkeys gets 400: there is nothing a browser could sign with.
 */
export async function reauthenticationOptions(
  deps: Pick<Deps, 'clock' | 'config' | 'db'>,
  tenant: Tenant,
  userId: string,
) {
  requirePasskeys(tenant)
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  const held = await listPasskeys(deps.db, tenant.id, user.id)
  if (held.length === 0) {
    fail('validation', {
      message: 'This account has no passkey: confirm it is you another way.',
      details: { issues: [{ path: 'body', message: 'the account has no passkey' }] },
    })
  }
  const challenge = await issueChallenge(deps, tenant.id, 'reauthentication', user.id)
  const options = await (await webauthnLibrary()).generateAuthenticationOptions({
    rpID: relyingParty(deps.config).id,
    allowCredentials: held.map((p) => ({ id: p.credentialId, transports: p.transports })) as never,
    challenge,
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    userVerification: 'required',
  })
  return { ...options, allowCredentials: options.allowCredentials ?? [] }
}
