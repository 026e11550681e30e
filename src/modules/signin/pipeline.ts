// The sign-in pipeline: every route that opens a session from credentials runs the same
// steps, in this order (CONTRACT §4-§6; docs/ARCHITECTURE.md has the diagram):
//   1. a first factor is proven (signin/password.ts, signin/login-code.ts), with its try
//      reserved in the failure budgets and nothing spent yet;
//   2. the tenant's policy decides whether a second factor is asked (signin/policy.ts);
//   3. the second factor is checked (signin/second-factor.ts), still without spending it;
//   4. one transaction spends both factors, records the audit rows and starts the session.
// A failure of step 3 or 4 is audited as UserLoginFailed and keeps its try; a second factor
// merely asked for gives the try back. Spending inside the session's transaction means a
// failure in between leaves the code unspent and no change without its audit row.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { AppError, fail } from '../../lib/errors.ts'
import type { SignInTry } from '../../lib/ratelimit.ts'
import { servedApplication } from '../../lib/served-client.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { ssoRequired } from '../federation/enforce.ts'
import type { HookMethod, HookUser } from '../hooks/call.ts'
import type { SecurityAlert } from '../notifications/security.ts'
import type { RevokeUserSessions, TokenEnvelope } from '../sessions/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { User } from '../users/reads.ts'
import { rememberDevice, remembersDevices } from './remembered-devices.ts'

/**
 * What spending a factor did: the user row as it now is, the audit entries, and the
 * security alerts to mail once the sign-in committed (CONTRACT §9; where from is added).
 */
export interface Spent {
  user?: User
  entries: AuditEntry[]
  alerts?: Omit<SecurityAlert, 'ip' | 'userAgent'>[]
}

/** A first factor proven but not spent. */
export interface FirstFactorProof {
  user: User
  email: string
  /** The try reserved in the failure budgets (CONTRACT §6 and §8). */
  attempt: SignInTry
  /** How the user signed in: `via` of UserLogin. */
  via: 'password' | 'passwordless' | 'passkey' | 'reset' | 'email-verification'
  /** The hooks' `context.method`, where `via` does not say it (a magic link's code). */
  hookMethod?: HookMethod
  /**
   * Spends the factor in the session's transaction (a login code is used up here);
   * `revoke` ends sessions that existed before (a password reset, CONTRACT §9), heard by
   * the revocation cache once the transaction commits (§4).
   */
  spend(tx: Handle, revoke: RevokeUserSessions): Promise<Spent>
}

/** A second factor checked but not spent. */
export interface SecondFactorProof {
  /** A remembered device stood in for it (CONTRACT §21): nothing to spend, none minted. */
  remembered?: true
  /**
   * Spends it in the session's transaction (claims the TOTP step, uses up the emailed
   * code); throws `invalid_mfa_code` when a parallel sign-in spent it first.
   */
  spend(tx: Handle): Promise<Spent>
}

export interface SignInRecord {
  /** Metadata of UserLoginFailed when the second factor fails, besides email and reason. */
  failure?: Record<string, unknown>
  /** Metadata of UserLogin, besides `via`. */
  login?: Record<string, unknown>
  /**
   * CONTRACT §21: the client asked to remember this device (`rememberDevice: true`); after
   * a second factor, where the tenant remembers devices, the envelope gains `deviceToken`.
   */
  rememberDevice?: boolean
}

type PipelineDeps = Pick<Deps, 'db' | 'audit' | 'clock' | 'sessions'>

/** A hook's `context.method` for each way the pipeline signs in (CONTRACT §21). */
const HOOK_METHODS: Record<FirstFactorProof['via'], HookMethod> = {
  password: 'password',
  passwordless: 'login_code',
  passkey: 'passkey',
  // A reset signs in with the new password; a verified address ends a sign-up.
  reset: 'password',
  'email-verification': 'signup',
}

/**
 * CONTRACT §21, the one place every sign-in and sign-up path asks the tenant's hooks: the
 * credentials' pipeline below, and the federated sign-ins (the SPEC's identity provider
 * and the SSO connections, federation/link.ts). `event`'s hook may refuse (403 hook_denied,
 * audited HookDenied); then custom_access_token's claims for the session's first access
 * token (with `claims: false` a sign-in whose session starts later, after a deferred
 * second factor, asks for them then, with `gate: false`). Before any transaction: a hook's wait
 * holds no connection.
 */
export async function askSignInHooks(
  deps: Pick<Deps, 'sessions'>,
  tenant: Tenant,
  event: 'before_sign_up' | 'before_sign_in',
  subject: () => Promise<HookUser>,
  actor: Actor,
  method: HookMethod,
  options: { gate?: boolean; claims?: boolean } = {},
): Promise<Record<string, unknown>> {
  if (options.gate !== false) await deps.sessions.gate(tenant, event, subject, actor, method)
  if (options.claims === false) return {}
  return deps.sessions.claimsFor(tenant, subject, actor, method)
}

/**
 * Steps 2 to 4 for a proven first factor: `secondFactor` checks what the policy asks
 * (undefined when it asks nothing), then the session opens.
 */
export async function completeSignIn(
  deps: PipelineDeps,
  tenant: Tenant,
  proof: FirstFactorProof,
  secondFactor: () => Promise<SecondFactorProof | undefined>,
  actor: Actor,
  record: SignInRecord = {},
): Promise<TokenEnvelope> {
  // CONTRACT §12: a user of an enforced SSO domain signs in there (Admins excepted). The
  // first factor was right, so its try is given back; the refusal is audited.
  if (await ssoRequired(deps.db, tenant.id, proof.user.emailNormalized, proof.user)) {
    await proof.attempt.release()
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'UserLoginFailed',
        userId: proof.user.id,
        email: proof.email,
        metadata: { via: proof.via, email: proof.email, reason: 'sso_required' },
      },
    ])
    fail('sso_required')
  }
  let second: SecondFactorProof | undefined
  try {
    second = await secondFactor()
  } catch (error) {
    await settleFailure(deps, tenant, proof, actor, record, error)
    throw error
  }
  // CONTRACT §21: the tenant's before_sign_in hook may refuse, once every factor is
  // proven (a hook is not asked twice for a sign-in that first answers mfa_required); the
  // factors were right, so the try is given back. Then custom_access_token's claims. Both
  // before the transaction: a hook's wait holds no connection.
  const method = proof.hookMethod ?? HOOK_METHODS[proof.via]
  const subject = () => deps.sessions.hookUser(tenant, proof.user)
  let claims: Record<string, unknown>
  try {
    claims = await askSignInHooks(deps, tenant, 'before_sign_in', subject, actor, method)
  } catch (error) {
    if (isReason(error, 'hook_denied')) await proof.attempt.release()
    throw error
  }
  let envelope: TokenEnvelope
  try {
    // signingIn: the alerts queued here and a new device's (sessions.start) are mailed
    // only once the transaction committed; `revoke` ends the sessions a reset replaces.
    envelope = await deps.sessions.signingIn(async (tx, revoke) => {
      const first = await proof.spend(tx, revoke)
      const other: Spent = second ? await second.spend(tx) : { entries: [] }
      const user = other.user ?? first.user ?? proof.user
      const who: Actor = { ...actor, type: 'user', id: user.id }
      for (const alert of [...(first.alerts ?? []), ...(other.alerts ?? [])]) {
        deps.sessions.alertOnCommit(tx, tenant, user, {
          ...alert,
          ip: actor.ip,
          userAgent: actor.userAgent,
        })
      }
      const remember = second !== undefined && !second.remembered && record.rememberDevice === true
      const deviceToken =
        remember && remembersDevices(tenant)
          ? await rememberDevice(tx, tenant, user.id, deps.clock.now())
          : undefined
      const started = await deps.sessions.start(
        tx,
        tenant,
        user,
        who,
        [
          ...first.entries,
          ...other.entries,
          {
            action: 'UserLogin',
            userId: user.id,
            email: proof.email,
            metadata: {
              via: proof.via,
              ...servedApplication(actor.servedClientId),
              ...(second?.remembered ? { rememberedDevice: true } : {}),
              ...(deviceToken ? { deviceRemembered: true } : {}),
              ...record.login,
            },
          },
        ],
        claims,
        { secondFactor: second !== undefined },
      )
      return deviceToken ? { ...started, deviceToken } : started
    })
  } catch (error) {
    if (isReason(error, 'invalid_mfa_code')) {
      await settleFailure(deps, tenant, proof, actor, record, error)
    }
    throw error
  }
  await proof.attempt.succeeded()
  return envelope
}

/**
 * A wrong second factor is a failed sign-in: audited, and its try stays spent. Being asked
 * for one is not: the try is given back, but the account's run of failures is not reset
 * (that would let second-factor guesses go uncounted).
 */
async function settleFailure(
  deps: PipelineDeps,
  tenant: Tenant,
  proof: FirstFactorProof,
  actor: Actor,
  record: SignInRecord,
  error: unknown,
): Promise<void> {
  if (!isReason(error, 'invalid_mfa_code')) {
    await proof.attempt.release()
    return
  }
  await deps.audit.record(deps.db, tenant.id, actor, [
    {
      action: 'UserLoginFailed',
      userId: proof.user.id,
      email: proof.email,
      metadata: { email: proof.email, reason: 'invalid_mfa_code', ...record.failure },
    },
  ])
}

function isReason(error: unknown, reason: string): boolean {
  return error instanceof AppError && error.reason === reason
}
