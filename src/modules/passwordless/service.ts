// Passwordless sign-in (SPEC capability 3, the login-code state table, endpoint notes 1-4,
// 8-10 and the Limits; CONTRACT §5 and §6).
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { AppError } from '../../lib/errors.ts'
import type { Mail } from '../../lib/mailer.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { codeMail } from '../codes/mail.ts'
import { CODE_TTL_SECONDS, issueCode, onRequestFloor } from '../codes/service.ts'
import { ssoRequired } from '../federation/enforce.ts'
import { MEMBER_ROLE } from '../roles/permissions.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { proveLoginCode } from '../signin/login-code.ts'
import { completeSignIn } from '../signin/pipeline.ts'
import { requirePasswordless } from '../signin/policy.ts'
import { checkSecondFactor } from '../signin/second-factor.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail } from '../users/reads.ts'
import { createUser } from '../users/service.ts'
import type { VerifyLoginCodeBody } from './schemas.ts'

/**
 * POST auth/request-login-code. Answers the same for a real, an unknown and a suspended
 * address (SPEC note 1); only a real, usable account gets a code by mail. With
 * passwordlessJitSignup an unknown address becomes a Pending member first (note 8).
 */
export function requestLoginCode(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'limits' | 'mailer' | 'sessions'>,
  tenant: Tenant,
  rawEmail: string,
  actor: Actor,
): Promise<void> {
  return mailLoginCode(deps, tenant, rawEmail, actor, { ttlSeconds: CODE_TTL_SECONDS }, (sent) =>
    codeMail('login', { ...sent, requestLanguage: actor.language }, tenant, sent.code),
  )
}

/**
 * Issues a login code for `rawEmail` (valid `ttlSeconds`, delivered as `delivery` says) and mails what `mail` makes of it
 * (the code itself, or a magic link that carries it, CONTRACT §20), with the SPEC's budgets
 * and answers: the same for every address, on a fixed schedule.
 */
export async function mailLoginCode(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'limits' | 'mailer' | 'sessions'>,
  tenant: Tenant,
  rawEmail: string,
  actor: Actor,
  code: { ttlSeconds: number; delivery?: 'link' },
  mail: (sent: IssuedLoginCode, email: string) => Mail,
): Promise<void> {
  requirePasswordless(tenant)
  const email = normalizeEmail(rawEmail)
  // Two independent buckets (SPEC, Limits): 10 per minute per IP, 3 per 15 minutes per
  // address. Both are spent whether or not the address has an account; a link is a code by
  // another road, and counts in the same buckets.
  await deps.limits.hit('codeRequestsPerEmail', `login:${tenant.id}:${email}`)
  // Answered on a fixed schedule, so a real account is not slower to answer (SPEC note 1).
  await onRequestFloor(deps.mailer, async () => {
    const sent = await issueLoginCode(deps, tenant, rawEmail, actor, code)
    // Delivered after the answer (onRequestFloor): a mail server cannot show in its timing.
    return sent && mail(sent, email)
  })
}

/** Who a login code was issued to, and the code; undefined when nobody got one. */
export interface IssuedLoginCode {
  to: string
  locale: string | null
  code: string
}

/**
 * Issues the login code of a request (the SPEC's code flow, and the code a magic link
 * carries, CONTRACT §20), valid `options.ttlSeconds`: the JIT sign-up and its hook, the enforced
 * SSO domain, the suspended user and the unknown address all handled as the SPEC says.
 */
async function issueLoginCode(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'sessions'>,
  tenant: Tenant,
  rawEmail: string,
  actor: Actor,
  options: { ttlSeconds: number; delivery?: 'link' },
): Promise<IssuedLoginCode | undefined> {
  const email = normalizeEmail(rawEmail)
  // CONTRACT §21: a JIT sign-up asks the tenant's before_sign_up hook when the code is
  // requested; a deny creates no user and mails nothing, and the answer stays `ok`.
  if (
    tenant.passwordlessJitSignup &&
    (await deps.sessions.hasHook(tenant, 'before_sign_up')) &&
    !(await findUserByEmail(deps.db, tenant.id, email))
  ) {
    const subject = async () => ({ email: rawEmail, role: MEMBER_ROLE, roles: [] })
    try {
      const method = options.delivery === 'link' ? 'magic_link' : 'login_code'
      await deps.sessions.gate(tenant, 'before_sign_up', subject, actor, method)
    } catch (error) {
      if (error instanceof AppError && error.reason === 'hook_denied') return undefined
      throw error
    }
  }
  const sent = await deps.db.transaction(async (tx) => {
    const entries: AuditEntry[] = []
    let user = await findUserByEmail(tx, tenant.id, email)
    // An address of an enforced SSO domain signs in there (CONTRACT §12): answered the
    // same, but no code, and no JIT signup.
    if (await ssoRequired(tx, tenant.id, email, user)) return undefined
    if (!user && tenant.passwordlessJitSignup) {
      const joined = await joinPending(deps, tx, tenant, rawEmail)
      user = joined.user
      if (joined.created) {
        entries.push({
          action: 'UserSignup',
          userId: user.id,
          email,
          metadata: { via: 'passwordless', status: 'Pending' },
        })
      }
    }
    // A suspended user is told `ok` like everyone else, but gets no code (SPEC, User status).
    const usable = user && user.status !== 'Suspended' ? user : undefined
    const code = await issueCode(
      deps,
      tx,
      { tenantId: tenant.id, userId: usable?.id, purpose: 'login' },
      options,
    )
    if (!usable || code === undefined) return undefined
    entries.push({ action: 'PasswordlessCodeSent', userId: usable.id, email, metadata: { email } })
    await deps.audit.record(tx, tenant.id, actor, entries)
    return { to: usable.email, locale: usable.locale, code }
  })
  return sent
}

class AddressTaken extends Error {}

/** Creates the Pending member of a JIT signup; a concurrent request may have won the race. */
async function joinPending(
  deps: Pick<Deps, 'clock' | 'db'>,
  tx: Handle,
  tenant: Tenant,
  rawEmail: string,
) {
  try {
    const user = await createUser(
      deps,
      tx,
      tenant,
      {
        email: rawEmail,
        passwordHash: null,
        role: MEMBER_ROLE,
        status: 'Pending',
        emailVerified: false,
      },
      () => {
        throw new AddressTaken()
      },
    )
    return { user, created: true }
  } catch (error) {
    if (!(error instanceof AddressTaken)) throw error
    const user = await findUserByEmail(tx, tenant.id, normalizeEmail(rawEmail))
    if (!user) throw error
    return { user, created: false }
  }
}

/** POST auth/verify-login-code: the code, then the tenant's MFA policy (notes 2 to 4). */
export async function verifyLoginCode(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'sessions'>,
  tenant: Tenant,
  input: VerifyLoginCodeBody,
  actor: Actor,
): Promise<TokenEnvelope> {
  const proof = await proveLoginCode(deps, tenant, input.email, input.code, actor)
  const { user } = proof
  return completeSignIn(
    deps,
    tenant,
    proof,
    // Email is not offered on this path (SPEC note 3): TOTP only.
    () =>
      checkSecondFactor(deps, tenant, user, {
        flow: 'loginCode',
        totpCode: input.totpCode,
        recoveryCode: input.recoveryCode,
        deviceToken: input.deviceToken,
      }),
    actor,
    {
      failure: { via: 'passwordless' },
      login: user.status === 'Pending' ? { firstLogin: true } : {},
      rememberDevice: input.rememberDevice,
    },
  )
}
