// Passwordless sign-in (SPEC capability 3, the login-code state table, endpoint notes 1-4,
// 8-10 and the Limits; CONTRACT §5 and §6).
import { setTimeout as sleep } from 'node:timers/promises'
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { AppError, fail } from '../../lib/errors.ts'
import type { SignInTry } from '../../lib/ratelimit.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { checkSecondFactor } from '../mfa/factors.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import type { Tenant } from '../tenants/store.ts'
import { createUser } from '../users/service.ts'
import { findUserByEmail, type User } from '../users/store.ts'
import { type CodeOwner, checkCode, issueCode, spendCode } from './codes.ts'
import { codeMail } from './mail.ts'
import { lockUser, markSignedInByCode } from './store.ts'

/**
 * Every successful request-login-code answer takes at least this long. The work differs
 * a little between a real address (a code row and an audit row are written) and an
 * unknown one; answering on a fixed schedule hides that difference (SPEC note 1).
 */
export const CODE_REQUEST_FLOOR_MS = 200

/** CONTRACT §3: `passwordless_disabled` (403) where the authPolicy is PasswordOnly. */
export function requirePasswordless(tenant: Tenant): void {
  if (tenant.authPolicy === 'PasswordOnly') fail('passwordless_disabled')
}

const loginOwner = (tenantId: string, userId: string): CodeOwner => ({
  tenantId,
  userId,
  purpose: 'login',
})

/**
 * POST auth/request-login-code. Answers the same for a real, an unknown and a suspended
 * address (SPEC note 1); only a real, usable account gets a code by mail. With
 * passwordlessJitSignup an unknown address becomes a Pending member first (note 8).
 */
export async function requestLoginCode(
  deps: Deps,
  tenant: Tenant,
  rawEmail: string,
  actor: Actor,
): Promise<void> {
  requirePasswordless(tenant)
  const email = normalizeEmail(rawEmail)
  // Two independent buckets (SPEC, Limits): 10 per minute per IP, 3 per 15 minutes per
  // address. Both are spent whether or not the address has an account.
  await deps.limits.hit('codeRequestsPerIp', `login:${actor.ip ?? ''}`)
  await deps.limits.hit('codeRequestsPerEmail', `login:${tenant.id}:${email}`)
  const started = performance.now()

  const sent = await deps.db.transaction(async (tx) => {
    const entries: AuditEntry[] = []
    let user = await findUserByEmail(tx, tenant.id, email)
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
    const code = await issueCode(deps, tx, {
      tenantId: tenant.id,
      userId: usable?.id,
      purpose: 'login',
    })
    if (!usable || code === undefined) return undefined
    entries.push({ action: 'PasswordlessCodeSent', userId: usable.id, email, metadata: { email } })
    await deps.audit.record(tx, tenant.id, actor, entries)
    return { to: usable.email, code }
  })
  // Delivery runs in the background: a slow mail server cannot show in the answer's timing.
  if (sent) deps.mailer.deliver(codeMail('login', sent.to, tenant.name, sent.code))
  const wait = started + CODE_REQUEST_FLOOR_MS - performance.now()
  if (wait > 0) await sleep(wait)
}

class AddressTaken extends Error {}

/** Creates the Pending member of a JIT signup; a concurrent request may have won the race. */
async function joinPending(deps: Deps, tx: Handle, tenant: Tenant, rawEmail: string) {
  try {
    const user = await createUser(
      deps,
      tx,
      tenant,
      {
        email: rawEmail,
        passwordHash: null,
        role: 'Member',
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

export interface CodeProof {
  user: User
  email: string
  attempt: SignInTry
}

/**
 * Proves the first factor "login code" without spending the code: it stays valid while a
 * second factor is asked for (SPEC, login-code state table). A wrong guess counts against
 * the code and against the account (CONTRACT §6); an unknown address, a suspended user
 * and a wrong, expired, burned or superseded code all answer 401 `invalid_code` (note 2).
 */
export async function proveLoginCode(
  deps: Deps,
  tenant: Tenant,
  rawEmail: string,
  code: string,
  actor: Actor,
): Promise<CodeProof> {
  requirePasswordless(tenant)
  const email = normalizeEmail(rawEmail)
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: 'code',
  })
  const found = await findUserByEmail(deps.db, tenant.id, email)
  const user = found && found.status !== 'Suspended' ? found : undefined
  // An unknown address runs the same statements against an id that matches nothing.
  const owner = loginOwner(tenant.id, user?.id ?? crypto.randomUUID())
  const check = await checkCode(deps, owner, code)
  if (user && check.ok) return { user, email, attempt }

  const reason = !found
    ? 'unknown_address'
    : !user
      ? 'account_suspended'
      : check.ok
        ? ''
        : check.reason
  await deps.audit.record(deps.db, tenant.id, actor, [
    {
      action: 'PasswordlessCodeFailed',
      userId: found?.id ?? null,
      email,
      metadata: { email, reason },
    },
    {
      action: 'UserLoginFailed',
      userId: found?.id ?? null,
      email,
      metadata: { email, reason: 'invalid_code', via: 'passwordless' },
    },
  ])
  fail('invalid_code')
}

/**
 * Inside the sign-in transaction: spends the login code (one atomic UPDATE, so of two
 * parallel sign-ins with one code only one passes), activates a Pending user and proves
 * the address. Answers the updated user and the audit entries of the code.
 */
export async function spendLoginCode(
  deps: Deps,
  tx: Handle,
  tenant: Tenant,
  user: User,
  code: string,
): Promise<{ user: User; entries: AuditEntry[] }> {
  // The user row is locked before the code row, in the order request-login-code takes them.
  await lockUser(tx, tenant.id, user.id)
  const spent = await spendCode(deps, tx, loginOwner(tenant.id, user.id), code)
  if (!spent.ok) fail('invalid_code')
  const updated = await markSignedInByCode(tx, tenant.id, user.id, deps.clock.now())
  if (!updated) fail('invalid_code')
  const email = user.emailNormalized
  const entries: AuditEntry[] = [{ action: 'PasswordlessCodeVerified', userId: user.id, email }]
  if (!user.emailVerified) {
    entries.push({
      action: 'UserEmailVerified',
      userId: user.id,
      email,
      metadata: { via: 'passwordless' },
    })
  }
  return { user: updated, entries }
}

/** POST auth/verify-login-code: the code, then the tenant's MFA policy (notes 2 to 4). */
export async function verifyLoginCode(
  deps: Deps,
  tenant: Tenant,
  input: { email: string; code: string; totpCode?: string },
  actor: Actor,
): Promise<TokenEnvelope> {
  await deps.limits.hit('tokenEndpoints', actor.ip ?? '')
  const { user, email, attempt } = await proveLoginCode(
    deps,
    tenant,
    input.email,
    input.code,
    actor,
  )

  let factorEntries: AuditEntry[]
  try {
    // Email is not offered on this path (SPEC note 3): TOTP only.
    factorEntries = await checkSecondFactor(deps, tenant, user, {
      flow: 'loginCode',
      totpCode: input.totpCode,
    })
  } catch (error) {
    if (error instanceof AppError && error.reason === 'invalid_mfa_code') {
      await deps.audit.record(deps.db, tenant.id, actor, [
        {
          action: 'UserLoginFailed',
          userId: user.id,
          email,
          metadata: { email, reason: 'invalid_mfa_code', via: 'passwordless' },
        },
      ])
    } else {
      // mfa_required / mfa_not_enrolled: not a failure, and the code stays valid.
      await attempt.release()
    }
    throw error
  }

  const envelope = await deps.db.transaction(async (tx) => {
    const spent = await spendLoginCode(deps, tx, tenant, user, input.code)
    const who: Actor = { ...actor, type: 'user', id: user.id }
    await deps.audit.record(tx, tenant.id, who, [
      ...spent.entries,
      ...factorEntries,
      {
        action: 'UserLogin',
        userId: user.id,
        email,
        metadata: {
          via: 'passwordless',
          ...(user.status === 'Pending' ? { firstLogin: true } : {}),
        },
      },
    ])
    return deps.sessions.start(tx, tenant, spent.user, who)
  })
  await attempt.succeeded()
  return envelope
}
