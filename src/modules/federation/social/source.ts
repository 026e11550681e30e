// A social connection's rules (CONTRACT §19) as a source for the one linker (federation/link.ts):
// an identity is (connection, provider subject). A first sign-in whose verified address
// matches a user links to that user only when the connection's linkByVerifiedEmail is on and
// the user's own address is verified (never into an unconfirmed account); otherwise it makes
// a new user (allowSignUp) or is refused with "an account with this address exists". An
// address whose domain an enforcing SSO connection owns signs in through that connection
// only; requireVerifiedEmail holds as for a password; mfaPolicy and suspension are the
// linker's own.
import type { Handle } from '../../../db/client.ts'
import type { Deps } from '../../../deps.ts'
import { normalizeEmail } from '../../../lib/email.ts'
import { AppError } from '../../../lib/errors.ts'
import { servedApplication } from '../../../lib/served-client.ts'
import { MEMBER_ROLE } from '../../roles/permissions.ts'
import type { Tenant } from '../../tenants/tenant.ts'
import type { User } from '../../users/reads.ts'
import { ssoRequired } from '../enforce.ts'
import {
  findIdentity,
  type IdentityKey,
  insertIdentity,
  updateIdentityEmail,
} from '../identities.ts'
import { type IdentitySource, reportsMultiFactor } from '../link.ts'
import { storePendingSignIn } from '../pending-mfa.ts'
import type { Flow } from '../sso-signin.ts'
import type { Profile } from './presets.ts'
import type { SocialConnection } from './queries.ts'

const WORDS = {
  accountExists:
    'An account with this email address already exists. Sign in to it, then connect this provider from your account page.',
  signupDisabled: 'There is no account for this identity here, and this connection creates none.',
  unverified:
    'This workspace requires a verified email address, and the provider did not verify it.',
  noMfa:
    'A second factor is required, and the provider did not report multi-factor authentication.',
  noEmail:
    'The provider shared no verified email address, so no account can be made or found by it.',
  ssoRequired: 'This address signs in through its organisation’s single sign-on.',
} as const

/** The metadata of the sign-in's audit rows. */
export const socialVia = (connection: SocialConnection) => ({
  method: 'social',
  provider: connection.provider,
  connectionId: connection.id,
})

export function socialSource(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  tenant: Tenant,
  connection: SocialConnection,
  profile: Profile,
  flow: Flow,
): IdentitySource {
  const given = profile.email
  const email = given ? normalizeEmail(given) : null
  const key: IdentityKey = {
    tenantId: tenant.id,
    kind: 'social',
    source: connection.id,
    subject: profile.subject,
  }
  const via = {
    ...socialVia(connection),
    subject: profile.subject,
    ...servedApplication(flow.clientId),
  }
  const exists = (userId: string) => ({
    reason: 'email_taken' as const,
    message: WORDS.accountExists,
    userId,
  })
  return {
    email,
    givenEmail: given,
    emailVerified: profile.emailVerified,
    via,
    method: 'social',
    findLink: async (tx) => {
      const row = await findIdentity(tx, key)
      return row ? { userId: row.userId, email: row.email } : undefined
    },
    insertLink: (tx, userId, now) => insertIdentity(tx, { ...key, userId, email, createdAt: now }),
    updateLinkEmail: (tx, value) => updateIdentityEmail(tx, key, value),
    mayLink: (user) =>
      connection.linkByVerifiedEmail && profile.emailVerified && user.emailVerified
        ? undefined
        : exists(user.id),
    newUser: () =>
      connection.allowSignUp
        ? { role: MEMBER_ROLE, ...(profile.names ? { profile: profile.names } : {}) }
        : { reason: 'signup_disabled', message: WORDS.signupDisabled, userId: null },
    admit: async (handle: Handle, user: User | undefined) => {
      const address = user?.emailNormalized ?? email
      if (address && (await ssoRequired(handle, tenant.id, address, user))) {
        return { reason: 'sso_required', message: WORDS.ssoRequired, userId: user?.id ?? null }
      }
      // The address the account will carry must be verified where the tenant says so: the
      // account's own, or the one the provider verified for it.
      const verified = user
        ? user.emailVerified || (profile.emailVerified && email === user.emailNormalized)
        : profile.emailVerified
      if (tenant.requireVerifiedEmail && !verified) {
        return { reason: 'email_not_verified', message: WORDS.unverified, userId: user?.id ?? null }
      }
      return undefined
    },
    multiFactor: reportsMultiFactor(profile.amr),
    noMfaMessage: WORDS.noMfa,
    // A user with TOTP gives it on the next page (pending-mfa.ts).
    deferSecondFactor: (tx, user) =>
      storePendingSignIn(deps, tx, tenant.id, {
        userId: user.id,
        connectionId: connection.id,
        amr: ['fed'],
        via,
        failVia: socialVia(connection),
        method: 'social',
        ...(flow.interaction ? { interaction: flow.interaction } : {}),
      }),
    linkedEntries: (userId) => [
      {
        action: 'IdentityLinked',
        userId,
        email,
        metadata: {
          connectionId: connection.id,
          provider: connection.provider,
          subject: profile.subject,
        },
      },
    ],
    noEmail: () => {
      throw new AppError('idp_exchange_failed', { message: WORDS.noEmail })
    },
  }
}
