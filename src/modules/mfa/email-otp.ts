// POST auth/request-email-otp (SPEC note 7; CONTRACT §5): after a correct password, a
// 6-digit code is mailed as the second factor of a password login. It is valid 10 minutes,
// burned by the 5th wrong guess, superseded by a newer one, and rate limited like login
// codes (its own buckets: 3 per 15 minutes per address, 10 per minute per IP).
import { afterCommit } from '../../db/after-commit.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import type { Actor } from '../audit/recorder.ts'
import { codeMail } from '../codes/mail.ts'
import { issueCode } from '../codes/service.ts'
import { provePassword } from '../signin/password.ts'
import { refusePasswords, secondFactorRequired } from '../signin/policy.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { EmailOtpRequestBody } from './schemas.ts'

export async function requestEmailOtp(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'limits' | 'mailer'>,
  tenant: Tenant,
  input: EmailOtpRequestBody,
  actor: Actor,
): Promise<void> {
  // SPEC note 9, before the account's buckets are touched: PasswordlessOnly refuses
  // passwords. (The per-IP bucket, declared on the route, is spent by now.)
  refusePasswords(tenant)
  const email = normalizeEmail(input.email)
  const { user, attempt } = await provePassword(
    deps,
    tenant,
    input.email,
    input.password,
    actor,
    'request-email-otp',
  )
  // The per-address bucket is charged only after the password is proven, so a stranger
  // cannot spend it to keep a user from receiving codes.
  await deps.limits.hit('codeRequestsPerEmail', `mfa:${tenant.id}:${email}`)
  // The password was right, but this is not a sign-in: the try is given back without
  // ending the account's run of failures.
  await attempt.release()
  // Only a user the policy asks for a second factor has a use for the code.
  if (!secondFactorRequired(tenant, user)) return
  await deps.db.transaction(async (tx) => {
    const issued = await issueCode(deps, tx, {
      tenantId: tenant.id,
      userId: user.id,
      purpose: 'mfa',
    })
    await deps.audit.record(tx, tenant.id, { ...actor, type: 'user', id: user.id }, [
      { action: 'MfaEmailOtpSent', userId: user.id, email, metadata: { email } },
    ])
    const code = issued as string
    afterCommit(tx, () => deps.mailer.deliver(codeMail('mfa', user.email, tenant.name, code)))
  })
}
