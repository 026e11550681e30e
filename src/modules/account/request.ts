// Requesting a mailed reset or verification code (CONTRACT §9), by the login-code rules:
// its own buckets (3 per 15 minutes per (tenant, address) here, 10 per minute per IP on
// the route), a new code voids the previous one, and an unknown, deleted or Suspended
// address (or, for a verification, one already verified) answers the same `{ ok: true }`
// after the same work and on the same schedule, and is sent nothing.
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import type { Actor } from '../audit/recorder.ts'
import { codeMail } from '../codes/mail.ts'
import { issueCode, onRequestFloor } from '../codes/service.ts'
import type { AccountCodePurpose } from '../signin/account-code.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail, type User } from '../users/reads.ts'

export type RequestDeps = Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'limits' | 'mailer'>

export async function requestAccountCode(
  deps: RequestDeps,
  tenant: Tenant,
  rawEmail: string,
  purpose: AccountCodePurpose,
  actor: Actor,
): Promise<void> {
  const email = normalizeEmail(rawEmail)
  // Spent whether or not the address has an account, like the login-code bucket.
  await deps.limits.hit('codeRequestsPerEmail', `${purpose}:${tenant.id}:${email}`)
  await onRequestFloor(deps.mailer, async () => {
    const sent = await deps.db.transaction(async (tx) => {
      const user = await findUserByEmail(tx, tenant.id, email)
      const usable = user && wantsCode(user, purpose) ? user : undefined
      // Without a usable user the same statements run against an id that matches nothing.
      const code = await issueCode(deps, tx, { tenantId: tenant.id, userId: usable?.id, purpose })
      if (!usable || code === undefined) return undefined
      if (purpose === 'reset') {
        await deps.audit.record(tx, tenant.id, actor, [
          { action: 'PasswordResetRequested', userId: usable.id, email, metadata: { email } },
        ])
      }
      return { to: usable.email, code }
    })
    // Delivered after the answer (onRequestFloor): a mail server cannot show in its timing.
    return sent && codeMail(purpose, sent.to, tenant.name, sent.code)
  })
}

/** Who is mailed a code: not a Suspended user; for a verification, not a verified address. */
function wantsCode(user: User, purpose: AccountCodePurpose): boolean {
  if (user.status === 'Suspended') return false
  return purpose === 'reset' || !user.emailVerified
}
