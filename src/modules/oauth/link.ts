// From a checked identity to a session (CONTRACT §7). Identities are keyed by (issuer,
// subject), never by email alone: an existing link wins; else a user with the same email,
// only when both the provider and this service verified that email; else a new Active
// Member. A suspended or deleted user does not come back through the provider, and the
// tenant's mfaPolicy holds here too: the provider must report a second factor (amr).
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { fail, type Reason } from '../../lib/errors.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { secondFactorRequired } from '../signin/policy.ts'
import type { Tenant } from '../tenants/queries.ts'
import { findUserByEmail, findUserById, type User, updateUser } from '../users/queries.ts'
import { createUser } from '../users/service.ts'
import { findIdentity, insertIdentity, updateIdentityEmail } from './queries.ts'

export interface Identity {
  issuer: string
  subject: string
  /** Trimmed, or null when the provider shared no valid address. */
  email: string | null
  emailVerified: boolean
  /**
   * The ID token's `amr` (RFC 8176), [] when it has none; undefined in plain OAuth 2.0
   * mode, where there is no ID token to report how the user authenticated.
   */
  amr: string[] | undefined
}

type Refusal = { reason: Reason; message: string; userId: string | null }

const REFUSALS = {
  deleted: 'This account has been deleted.',
  suspended: 'This account is suspended.',
  unverified:
    'An account with this email already exists, and the identity provider has not verified the address, so it cannot be linked.',
  unproven:
    'An account with this email already exists, and its address has not been verified, so it cannot be linked.',
  noMfa:
    'A second factor is required, and the identity provider did not report multi-factor authentication.',
  noEmail: 'The identity provider did not share an email address.',
} as const

export async function signInWithIdentity(
  deps: Pick<Deps, 'audit' | 'clock' | 'db' | 'sessions'>,
  tenant: Tenant,
  identity: Identity,
  actor: Actor,
): Promise<TokenEnvelope> {
  const email = identity.email ? normalizeEmail(identity.email) : null
  // signingIn: a sign-in from a new device is mailed about once it committed (CONTRACT §9).
  const outcome = await deps.sessions.signingIn(async (tx) => {
    const refuse = async (refusal: Refusal) => {
      await deps.audit.record(tx, tenant.id, actor, [
        {
          action: 'UserLoginFailed',
          userId: refusal.userId,
          email,
          metadata: { via: 'idp', email, reason: refusal.reason, issuer: identity.issuer },
        },
      ])
      return { refusal }
    }

    const link = await findIdentity(tx, tenant.id, identity.issuer, identity.subject)
    let user: User | undefined
    let created = false
    if (link) {
      user = await findUserById(tx, tenant.id, link.userId)
      // Soft-deleted: the link outlives the account until the purge, but leads nowhere.
      if (!user) {
        return refuse({
          reason: 'invalid_credentials',
          message: REFUSALS.deleted,
          userId: link.userId,
        })
      }
    } else {
      user = email ? await findUserByEmail(tx, tenant.id, email) : undefined
      // An unverified address proves nothing: linking on it would hand the account to
      // whoever typed that address at the provider.
      if (user && !identity.emailVerified) {
        return refuse({ reason: 'email_taken', message: REFUSALS.unverified, userId: user.id })
      }
      // Nor may the account be one whose owner never proved the address here (signup
      // does not verify it): whoever pre-registered it would share the victim's session.
      if (user && !user.emailVerified) {
        return refuse({ reason: 'email_taken', message: REFUSALS.unproven, userId: user.id })
      }
    }
    if (user?.status === 'Suspended') {
      return refuse({ reason: 'account_suspended', message: REFUSALS.suspended, userId: user.id })
    }
    // CONTRACT §5 for this path too; a user about to be created has no TOTP, so only
    // Required asks it. The provider performed the factor, or the sign-in is refused.
    const mfaNeeded = user ? secondFactorRequired(tenant, user) : tenant.mfaPolicy === 'Required'
    if (mfaNeeded && !reportsMultiFactor(identity.amr)) {
      return refuse({ reason: 'mfa_required', message: REFUSALS.noMfa, userId: user?.id ?? null })
    }

    const now = deps.clock.now()
    if (!user) {
      if (!identity.email) fail('idp_exchange_failed', { message: REFUSALS.noEmail })
      user = await createUser(
        deps,
        tx,
        tenant,
        {
          email: identity.email,
          passwordHash: null,
          role: 'Member',
          status: 'Active',
          emailVerified: identity.emailVerified,
        },
        () => fail('email_taken'),
      )
      created = true
    }
    if (!link) {
      const linked = await insertIdentity(tx, {
        tenantId: tenant.id,
        issuer: identity.issuer,
        subject: identity.subject,
        userId: user.id,
        email,
        createdAt: now,
      })
      // The same identity was linked by a concurrent callback: let that one win.
      if (!linked) fail('idp_exchange_failed')
    } else if (link.email !== email) {
      await updateIdentityEmail(tx, link, email)
    }

    // Through an existing link the provider vouches for the address it verified (the
    // user's own, not another); a user linked by email had verified it here already.
    const verifies = identity.emailVerified && email === user.emailNormalized && !user.emailVerified
    const updated = await updateUser(tx, tenant.id, user.id, {
      lastLoginAt: now,
      updatedAt: now,
      ...(verifies ? { emailVerified: true } : {}),
    })
    if (!updated) fail('idp_exchange_failed')

    const who: Actor = { ...actor, type: 'user', id: user.id }
    const via = { via: 'idp', issuer: identity.issuer, subject: identity.subject }
    const entries: AuditEntry[] = []
    if (created) entries.push({ action: 'UserSignup', userId: user.id, email, metadata: via })
    if (verifies && !created) {
      entries.push({ action: 'UserEmailVerified', userId: user.id, email, metadata: via })
    }
    entries.push({
      action: 'UserLogin',
      userId: user.id,
      email,
      metadata: { ...via, ...(!link && !created ? { linked: true } : {}) },
    })
    await deps.audit.record(tx, tenant.id, who, entries)
    return { envelope: await deps.sessions.start(tx, tenant, updated, who) }
  })
  if ('refusal' in outcome) {
    const { reason, message } = outcome.refusal
    // No method of ours can complete it: the second factor is the provider's to ask.
    fail(reason, { message, ...(reason === 'mfa_required' ? { details: { methods: [] } } : {}) })
  }
  return outcome.envelope
}

/**
 * Whether the provider reports multi-factor authentication (RFC 8176 §2): `mfa`, or at
 * least two distinct methods, which covers a possession factor (`otp`, `hwk`, `swk`) with
 * any other. No `amr`, or no ID token at all, reports nothing.
 */
export function reportsMultiFactor(amr: string[] | undefined): boolean {
  if (!amr) return false
  const methods = new Set(amr)
  return methods.has('mfa') || methods.size >= 2
}
