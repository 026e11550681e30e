// The policy dry-run (CONTRACT §21): what proposed sign-in settings would do to the users who
// signed in during the period, read from the audit log (UserLogin) and today's users, and
// changing nothing: no write, no audit row. The rules, in the order the sign-in pipeline meets
// them (signin/pipeline.ts), are in docs/security-model.md ("Policy dry-run"); each user gets
// the first that applies.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { signInsSince } from '../audit/trail.ts'
import { emailDomain, normalizeDomain } from '../federation/domains.ts'
import { enforcingConnection } from '../federation/enforce.ts'
import { isAdminRole } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findLiveUsersByIds, type User } from '../users/reads.ts'
import type { DryRunBody, DryRunOutcome, DryRunResult } from './schemas.ts'

const DAY_MS = 86_400_000

/** How a user signed in during the period. */
interface Ways {
  password: boolean
  loginCode: boolean
  /** Any way but an SSO connection's. */
  notSso: boolean
}

type Verdict = { outcome: DryRunOutcome; reason: string }

export async function dryRun(
  deps: Pick<Deps, 'db' | 'clock'>,
  tenant: Tenant,
  body: DryRunBody,
): Promise<DryRunResult> {
  const proposed = {
    mfaPolicy: body.mfaPolicy ?? tenant.mfaPolicy,
    authPolicy: body.authPolicy ?? tenant.authPolicy,
    requireVerifiedEmail: body.requireVerifiedEmail ?? tenant.requireVerifiedEmail,
    breachedPasswordPolicy: body.breachedPasswordPolicy ?? tenant.breachedPasswordPolicy,
  }
  const domains = body.enforcedSsoDomains && enforcedDomains(body.enforcedSsoDomains)
  const since = new Date(deps.clock.now().getTime() - (body.sinceDays ?? 30) * DAY_MS)

  const tallies = await signInsSince(deps.db, tenant.id, since)
  const ways = new Map<string, Ways>()
  let signIns = 0
  for (const t of tallies) {
    signIns += t.count
    const w = ways.get(t.userId) ?? { password: false, loginCode: false, notSso: false }
    if (t.via === 'password' || t.via === 'reset') w.password = true
    if (t.via === 'passwordless') w.loginCode = true
    if (t.method !== 'sso') w.notSso = true
    ways.set(t.userId, w)
  }

  // Omitted domains: today's enforcement, asked once per domain.
  const enforcedToday = new Map<string, boolean>()
  const enforced = async (email: string): Promise<boolean> => {
    const domain = emailDomain(email)
    if (!domain) return false
    if (domains) return domains.has(domain)
    let known = enforcedToday.get(domain)
    if (known === undefined) {
      known = (await enforcingConnection(deps.db, tenant.id, email)) !== undefined
      enforcedToday.set(domain, known)
    }
    return known
  }

  const verdict = async (user: User, w: Ways): Promise<Verdict | undefined> => {
    if (!isAdminRole(user.role) && w.notSso && (await enforced(user.emailNormalized)))
      return { outcome: 'sso_redirect', reason: 'sso_required' }
    if (proposed.authPolicy === 'PasswordlessOnly' && w.password)
      return { outcome: 'blocked', reason: 'password_login_disabled' }
    if (proposed.authPolicy === 'PasswordOnly' && w.loginCode)
      return { outcome: 'blocked', reason: 'passwordless_disabled' }
    if (proposed.requireVerifiedEmail && !user.emailVerified && w.password)
      return { outcome: 'blocked', reason: 'email_not_verified' }
    if (proposed.breachedPasswordPolicy === 'block' && user.passwordBreached)
      return { outcome: 'password_change_needed', reason: 'password_breached' }
    if (proposed.mfaPolicy === 'Required' && !user.totpEnabled)
      return { outcome: 'second_factor_needed', reason: 'mfa_not_enrolled' }
    return undefined
  }

  const people = await findLiveUsersByIds(deps.db, tenant.id, [...ways.keys()])
  const affected: DryRunResult['affected'] = []
  for (const user of people) {
    // A suspended or pending user signs in under no policy.
    if (user.status !== 'Active') continue
    const v = await verdict(user, ways.get(user.id) as Ways)
    if (v) affected.push({ userId: user.id, email: user.email, ...v })
  }
  affected.sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0))
  return { signIns, users: ways.size, affected }
}

/** The proposed domains, folded as §12 folds a connection's; anything else is 400. */
function enforcedDomains(input: string[]): Set<string> {
  const out = new Set<string>()
  input.forEach((name, i) => {
    const domain = normalizeDomain(name)
    if (!domain) {
      fail('validation', {
        details: {
          issues: [{ path: `body.enforcedSsoDomains.${i}`, message: 'is not an email domain' }],
        },
      })
    }
    out.add(domain)
  })
  return out
}
