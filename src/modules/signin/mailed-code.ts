// The check every emailed first factor shares (a login code, a reset or verification
// code; CONTRACT §5, §6, §8, §9): the try reserved in the sign-in budgets before anything
// is compared, then the code of the address's user checked without being spent. An
// unknown, deleted or Suspended address runs the same statements against an id that
// matches nothing, so it answers like a wrong code in the same time.
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import type { SignInTry } from '../../lib/ratelimit.ts'
import type { Actor } from '../audit/recorder.ts'
import { type CodePurpose, checkCode } from '../codes/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail, type User } from '../users/reads.ts'

export interface MailedCodeCheck {
  email: string
  attempt: SignInTry
  /** The address's user, whatever its state. */
  found: User | undefined
  /** The user, when the code is theirs and open; undefined otherwise. */
  user: User | undefined
  /** Why not, for the audit: unknown_address, account_suspended, wrong, burned, no_open_code. */
  cause: string
  /** The code is the one a magic link carries (CONTRACT §20). */
  link: boolean
}

export async function checkMailedCode(
  deps: Pick<Deps, 'db' | 'guard' | 'clock' | 'config'>,
  tenant: Tenant,
  rawEmail: string,
  code: string,
  purpose: CodePurpose,
  actor: Actor,
): Promise<MailedCodeCheck> {
  const email = normalizeEmail(rawEmail)
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email,
    ip: actor.ip ?? '',
    factor: 'code',
  })
  const found = await findUserByEmail(deps.db, tenant.id, email)
  const usable = found && found.status !== 'Suspended' ? found : undefined
  const owner = { tenantId: tenant.id, userId: usable?.id ?? crypto.randomUUID(), purpose }
  const check = await checkCode(deps, owner, code)
  const cause = !found
    ? 'unknown_address'
    : !usable
      ? 'account_suspended'
      : check.ok
        ? ''
        : check.reason
  const link = check.ok && check.link === true
  return { email, attempt, found, user: check.ok ? usable : undefined, cause, link }
}
