// What a tenant's policies allow a sign-in (SPEC, authPolicy and mfaPolicy; CONTRACT §5):
// the one place each rule is written, for every sign-in route.
import { fail } from '../../lib/errors.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { User } from '../users/reads.ts'

/**
 * SPEC note 9: a PasswordlessOnly tenant refuses passwords, whoever asks (401; signup
 * answers 400, the password-reset routes 403, CONTRACT §9).
 */
export function refusePasswords(tenant: Tenant, status?: 400 | 403): void {
  if (tenant.authPolicy === 'PasswordlessOnly') {
    fail('password_login_disabled', status ? { status } : undefined)
  }
}

/** CONTRACT §3: a PasswordOnly tenant refuses emailed login codes (403). */
export function requirePasswordless(tenant: Tenant): void {
  if (tenant.authPolicy === 'PasswordOnly') fail('passwordless_disabled')
}

/** Whether the tenant's policy asks this user for a second factor (CONTRACT §5). */
export function secondFactorRequired(tenant: Tenant, user: User): boolean {
  if (tenant.mfaPolicy === 'Required') return true
  if (tenant.mfaPolicy === 'Optional') return user.totpEnabled
  return false
}
