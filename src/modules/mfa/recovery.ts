// POST mfa/recovery-codes/regenerate (CONTRACT §9): ten new recovery codes for a user
// with TOTP, proven by a current TOTP code; the old ones, spent or not, no longer work.
// A stolen access token alone cannot mint codes that outlive it: the TOTP code is asked,
// and a wrong one counts against the account's failure budget (§6) like a wrong TOTP
// code at sign-in.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById } from '../users/reads.ts'
import { claimTotpStep } from '../users/writes.ts'
import { RECOVERY_CODE_COUNT, replaceRecoveryCodes } from './recovery-codes.ts'
import { matchTotpStep, openTotpSecret } from './totp.ts'

export async function regenerateRecoveryCodes(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'guard' | 'mailer'>,
  tenant: Tenant,
  userId: string,
  totpCode: string,
  actor: Actor,
): Promise<string[]> {
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  if (!user.totpEnabled || !user.totpSecretEnc) fail('mfa_not_enrolled')
  const attempt = await deps.guard.begin({
    tenantId: tenant.id,
    email: user.emailNormalized,
    ip: actor.ip ?? '',
    factor: 'code',
  })
  const secret = openTotpSecret(deps.cipher, tenant.id, user.id, user.totpSecretEnc)
  const step = secret === undefined ? null : matchTotpStep(secret, totpCode, deps.clock.now())
  // A step already accepted is refused at once; the claim below settles any race.
  if (step === null || (user.totpLastStep !== null && step <= user.totpLastStep)) {
    fail('invalid_mfa_code')
  }
  const codes = await deps.db.transaction(async (tx) => {
    if (!(await claimTotpStep(tx, tenant.id, user.id, step))) fail('invalid_mfa_code')
    const fresh = await replaceRecoveryCodes(deps, tx, tenant.id, user.id)
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'MfaRecoveryCodesRegenerated',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { count: RECOVERY_CODE_COUNT },
      },
    ])
    return fresh
  })
  await attempt.succeeded()
  sendSecurityAlert(deps, tenant, user, {
    event: 'recovery_codes_regenerated',
    ip: actor.ip,
    userAgent: actor.userAgent,
  })
  return codes
}
