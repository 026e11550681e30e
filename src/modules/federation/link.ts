// From a checked identity to a session: the one place where an external identity is linked
// to a user and signed in, for the SPEC's identity provider (CONTRACT §7) and for the SSO
// connections (§12, federation/sso-signin.ts). Identities are keyed by who vouches for them
// ((issuer, subject) for the provider, (connection, subject) for a connection; one table,
// federation/identities.ts), never by email alone: an existing link wins; else a user with
// the same email, when the source's rule allows linking it; else a new Active user, when the
// source allows creating one. A suspended or deleted user does not come back this way, and
// the tenant's mfaPolicy holds here too, unless the source proved a second factor.

import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { AppError, fail, type Reason } from '../../lib/errors.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import type { HookMethod, HookUser } from '../hooks/call.ts'
import { type BaseRole, MEMBER_ROLE } from '../roles/permissions.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { askSignInHooks } from '../signin/pipeline.ts'
import { secondFactorRequired } from '../signin/policy.ts'
import { isRemembered } from '../signin/remembered-devices.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail, findUserById, type User } from '../users/reads.ts'
import { createUser, type UserDraft } from '../users/service.ts'
import { updateUser } from '../users/writes.ts'
import { findIdentity, insertIdentity, updateIdentityEmail } from './identities.ts'
import { storePendingSignIn } from './pending-mfa.ts'

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

export type Refusal = { reason: Reason; message: string; userId: string | null }

/** An existing link of an identity: whose it is, and the address it last carried. */
export interface Link {
  userId: string
  email: string | null
}

/**
 * Who vouches for an identity, and its rules: how its links are stored, which existing
 * account it may be linked to by email, what a new account looks like, whether it proved
 * a second factor, and how the audit rows name it.
 */
export interface IdentitySource {
  /** The address it vouches for, normalised, or null. */
  email: string | null
  /** The same address as the source wrote it, for a new account's email. */
  givenEmail: string | null
  /** Whether it verified that address. */
  emailVerified: boolean
  /** Merged into the metadata of every audit row of the sign-in. */
  via: Record<string, unknown>
  /** The hooks' `context.method` (CONTRACT §21). */
  method: Extract<HookMethod, 'idp' | 'sso' | 'social'>
  /** A refusal before any account is looked at (an address the source may not speak for). */
  precheck?(): Refusal | undefined
  findLink(tx: Handle): Promise<Link | undefined>
  /** Links the identity to `userId`; false when a concurrent sign-in linked it first. */
  insertLink(tx: Handle, userId: string, now: Date): Promise<boolean>
  updateLinkEmail(tx: Handle, email: string | null): Promise<void>
  /** Whether an existing, not yet linked account with the address may be linked. */
  mayLink(user: User): Refusal | undefined
  /**
   * A new account's role (and the profile names the source gave, if any), or a refusal when
   * the source creates none.
   */
  newUser(): { role: BaseRole; profile?: UserDraft['profile'] } | Refusal
  /**
   * The source's last word once the account is known (`user`; undefined for one the sign-in
   * would create): a refusal for a tenant policy it applies (enforced SSO, verified email).
   */
  admit?(handle: Handle, user: User | undefined): Promise<Refusal | undefined>
  /** Whether the source proved a second factor (so mfaPolicy is met). */
  multiFactor: boolean
  /**
   * CONTRACT §21: the remembered-device token of the browser the sign-in came back to (the
   * hosted pages' cookie): a live one of the user stands in for the policy's second factor,
   * as at a password sign-in (signin/second-factor.ts).
   */
  deviceToken?: string
  /** What the tenant's mfaPolicy refusal says (its details.methods are always []). */
  noMfaMessage: string
  /**
   * When the policy asks a second factor the source did not prove and the user has one of
   * ours (TOTP), the source may defer it instead of refusing (CONTRACT §12, "mfaPolicy
   * applies after SSO"): called in the linker's transaction, once the identity is linked,
   * it stores the pending state and answers its id; no session starts.
   */
  deferSecondFactor?(tx: Handle, user: User, now: Date): Promise<string>
  /** Extra audit rows of a first link (SsoIdentityLinked). */
  linkedEntries?(userId: string): AuditEntry[]
  /**
   * Called in the linker's transaction once the user is known and linked, before its
   * session (or pending second factor) starts: an SSO connection's roleMapping applies the
   * roles the assertion maps to (CONTRACT §17), so the new access token carries them. Its
   * audit rows are recorded with the sign-in's.
   */
  accepted?(tx: Handle, user: User, now: Date): Promise<AuditEntry[]>
  /** The error thrown when a new account cannot be made for want of an address. */
  noEmail(): never
}

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

/** The SPEC's identity provider (CONTRACT §7) as a source. */
function providerSource(
  tenant: Tenant,
  identity: Identity,
  defer?: IdentitySource['deferSecondFactor'],
  deviceToken?: string,
): IdentitySource {
  const email = identity.email ? normalizeEmail(identity.email) : null
  const key = {
    tenantId: tenant.id,
    kind: 'idp' as const,
    source: identity.issuer,
    subject: identity.subject,
  }
  return {
    email,
    givenEmail: identity.email,
    emailVerified: identity.emailVerified,
    via: { via: 'idp', issuer: identity.issuer, subject: identity.subject },
    method: 'idp',
    findLink: (tx) => findIdentity(tx, key),
    insertLink: (tx, userId, now) => insertIdentity(tx, { ...key, userId, email, createdAt: now }),
    updateLinkEmail: (tx, value) => updateIdentityEmail(tx, key, value),
    // An unverified address proves nothing: linking on it would hand the account to
    // whoever typed that address at the provider. Nor may the account be one whose owner
    // never proved the address here (signup does not verify it): whoever pre-registered
    // it would share the victim's session.
    mayLink: (user) => {
      if (!identity.emailVerified) {
        return { reason: 'email_taken', message: REFUSALS.unverified, userId: user.id }
      }
      if (!user.emailVerified) {
        return { reason: 'email_taken', message: REFUSALS.unproven, userId: user.id }
      }
      return undefined
    },
    newUser: () => ({ role: MEMBER_ROLE }),
    multiFactor: reportsMultiFactor(identity.amr),
    noMfaMessage: REFUSALS.noMfa,
    ...(defer ? { deferSecondFactor: defer } : {}),
    ...(deviceToken ? { deviceToken } : {}),
    noEmail: () => fail('idp_exchange_failed', { message: REFUSALS.noEmail }),
  }
}

export async function signInWithIdentity(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'db' | 'sessions'>,
  tenant: Tenant,
  identity: Identity,
  actor: Actor,
  options: { deferSecondFactor?: boolean; deviceToken?: string } = {},
): Promise<TokenEnvelope | PendingSecondFactor> {
  // Only a callback the hosted pages drove defers the second factor to them (web/idp.ts);
  // an API client gets the SPEC's answer, 401 mfa_required.
  const via = { via: 'idp', issuer: identity.issuer, subject: identity.subject }
  const defer: IdentitySource['deferSecondFactor'] = options.deferSecondFactor
    ? (tx, user) =>
        storePendingSignIn(deps, tx, tenant.id, {
          userId: user.id,
          connectionId: null,
          amr: ['fed'],
          via,
          failVia: { via: 'idp', issuer: identity.issuer },
        })
    : undefined
  const source = providerSource(tenant, identity, defer, options.deviceToken)
  return signInWithSource(deps, tenant, source, actor, {
    failVia: { via: 'idp', issuer: identity.issuer },
  })
}

/** The refusals signInWithSource threw after auditing them (UserLoginFailed). */
const audited = new WeakSet<Error>()
export const wasAudited = (error: Error) => audited.has(error)

/** A sign-in linked and waiting for the second factor the source deferred. */
export interface PendingSecondFactor {
  pendingSecondFactor: string
  userId: string
}

/**
 * Signs in the identity `source` vouches for (the rules above), in one transaction with
 * its audit rows and the new session. A refusal is audited as UserLoginFailed (with
 * `metadata.reason`) and thrown as that reason's AppError.
 */
export async function signInWithSource(
  deps: Pick<Deps, 'audit' | 'clock' | 'db' | 'sessions'>,
  tenant: Tenant,
  source: IdentitySource,
  actor: Actor,
  options: { failVia: Record<string, unknown> },
): Promise<TokenEnvelope | PendingSecondFactor> {
  const { email } = source
  // signingIn: a sign-in from a new device is mailed about once it committed (CONTRACT §9).
  type Outcome =
    | { refusal: Refusal }
    | { pending: string; userId: string }
    | { envelope: TokenEnvelope }
  // CONTRACT §21: the tenant's hooks are asked once the identity's account is known, read
  // here ahead of the transaction by the same rules (a hook's wait holds no connection);
  // the transaction resolves it again, so a change in between is judged as it then is.
  const claims = await askHooks(deps, tenant, source, actor, deps.clock.now())
  const outcome = await deps.sessions.signingIn(async (tx): Promise<Outcome> => {
    const refuse = async (refusal: Refusal) => {
      await deps.audit.record(tx, tenant.id, actor, [
        {
          action: 'UserLoginFailed',
          userId: refusal.userId,
          email,
          metadata: { ...options.failVia, email, reason: refusal.reason },
        },
      ])
      return { refusal }
    }

    const now = deps.clock.now()
    const resolved = await resolve(tx, tenant, source, now)
    if ('refusal' in resolved) return refuse(resolved.refusal)
    const { link, fresh } = resolved
    let { user } = resolved
    let created = false
    const deferred = resolved.deferred && source.deferSecondFactor

    if (!user) {
      if (!email || !source.givenEmail) source.noEmail()
      user = await createUser(
        deps,
        tx,
        tenant,
        {
          email: source.givenEmail,
          passwordHash: null,
          role: fresh?.role ?? MEMBER_ROLE,
          status: 'Active',
          emailVerified: source.emailVerified,
          ...(fresh?.profile ? { profile: fresh.profile } : {}),
        },
        () => fail('email_taken'),
      )
      created = true
    }
    if (!link) {
      // The same identity was linked by a concurrent callback: let that one win.
      if (!(await source.insertLink(tx, user.id, now))) fail('idp_exchange_failed')
    } else if (link.email !== email) {
      await source.updateLinkEmail(tx, email)
    }
    const acceptedEntries = source.accepted ? await source.accepted(tx, user, now) : []
    if (deferred) {
      const early = [...(!link && source.linkedEntries ? source.linkedEntries(user.id) : [])]
      early.push(...acceptedEntries)
      if (early.length > 0) {
        const who: Actor = { ...actor, type: 'user', id: user.id }
        await deps.audit.record(tx, tenant.id, who, early)
      }
      return { pending: await deferred(tx, user, now), userId: user.id }
    }

    // Through an existing link the source vouches for the address it verified (the
    // user's own, not another); a user linked by email had verified it here already.
    const verifies = source.emailVerified && email === user.emailNormalized && !user.emailVerified
    const updated = await updateUser(tx, tenant.id, user.id, {
      lastLoginAt: now,
      updatedAt: now,
      ...(verifies ? { emailVerified: true } : {}),
    })
    if (!updated) fail('idp_exchange_failed')

    const who: Actor = { ...actor, type: 'user', id: user.id }
    const { via } = source
    const entries: AuditEntry[] = []
    if (created) entries.push({ action: 'UserSignup', userId: user.id, email, metadata: via })
    if (verifies && !created) {
      entries.push({ action: 'UserEmailVerified', userId: user.id, email, metadata: via })
    }
    if (!link && source.linkedEntries) entries.push(...source.linkedEntries(user.id))
    entries.push(...acceptedEntries)
    entries.push({
      action: 'UserLogin',
      userId: user.id,
      email,
      metadata: {
        ...via,
        ...(!link && !created ? { linked: true } : {}),
        ...(resolved.remembered ? { rememberedDevice: true } : {}),
      },
    })
    await deps.audit.record(tx, tenant.id, who, entries)
    // The session proved a second factor when the source did, or a remembered device
    // stood in for it (an organization's mfaRequired reads it, CONTRACT §18).
    const secondFactor = source.multiFactor || resolved.remembered
    return {
      envelope: await deps.sessions.start(tx, tenant, updated, who, [], claims, { secondFactor }),
    }
  })
  if ('refusal' in outcome) {
    const { reason, message } = outcome.refusal
    // No method of ours can complete it: the second factor is the source's to ask.
    const error = new AppError(reason, {
      message,
      ...(reason === 'mfa_required' ? { details: { methods: [] } } : {}),
    })
    audited.add(error)
    throw error
  }
  if ('pending' in outcome) {
    return { pendingSecondFactor: outcome.pending, userId: outcome.userId }
  }
  return outcome.envelope
}

/** Who an identity signs in as, by the rules above, or why it may not. */
type Resolution =
  | { refusal: Refusal }
  | {
      link: Link | undefined
      /** Undefined when the sign-in creates the account (`fresh` holds its role). */
      user: User | undefined
      fresh: { role: BaseRole; profile?: UserDraft['profile'] } | undefined
      /** The policy's second factor is deferred to the source's next page. */
      deferred: boolean
      /** A remembered device of the user stood in for the policy's second factor. */
      remembered: boolean
    }

async function resolve(
  handle: Handle,
  tenant: Tenant,
  source: IdentitySource,
  now: Date,
): Promise<Resolution> {
  const early = source.precheck?.()
  if (early) return { refusal: early }
  const link = await source.findLink(handle)
  let user: User | undefined
  if (link) {
    user = await findUserById(handle, tenant.id, link.userId)
    // Soft-deleted: the link outlives the account until the purge, but leads nowhere.
    if (!user) {
      return {
        refusal: { reason: 'invalid_credentials', message: REFUSALS.deleted, userId: link.userId },
      }
    }
  } else {
    user = source.email ? await findUserByEmail(handle, tenant.id, source.email) : undefined
    const refusal = user ? source.mayLink(user) : undefined
    if (refusal) return { refusal }
  }
  if (user?.status === 'Suspended') {
    return {
      refusal: { reason: 'account_suspended', message: REFUSALS.suspended, userId: user.id },
    }
  }
  const fresh = user ? undefined : source.newUser()
  if (fresh && 'reason' in fresh) return { refusal: fresh }
  const refused = await source.admit?.(handle, user)
  if (refused) return { refusal: refused }
  // CONTRACT §5 for this path too; a user about to be created has no TOTP, so only
  // Required asks it. The source proved the factor, or the sign-in is refused.
  const mfaNeeded = user ? secondFactorRequired(tenant, user) : tenant.mfaPolicy === 'Required'
  const unproven = mfaNeeded && !source.multiFactor
  // CONTRACT §21: a remembered device of the user (the browser's cookie) stands in for it.
  const remembered =
    unproven &&
    user !== undefined &&
    (await isRemembered(handle, tenant, user.id, source.deviceToken, now))
  // A user with TOTP proves it on the source's own next page; one without any factor of
  // ours is refused as before (a new user never has one).
  const deferred =
    unproven && !remembered && user?.totpEnabled === true && source.deferSecondFactor !== undefined
  if (unproven && !remembered && !deferred) {
    return {
      refusal: { reason: 'mfa_required', message: source.noMfaMessage, userId: user?.id ?? null },
    }
  }
  return { link, user, fresh, deferred, remembered }
}

/**
 * The tenant's hooks for a federated sign-in, through the pipeline's one place
 * (signin/pipeline.ts): before_sign_up for an account the sign-in would create (nothing is
 * created on a deny), else before_sign_in; and the first token's custom claims, unless
 * the second factor is deferred (its page asks for them, pending-mfa.ts). A sign-in that
 * will be refused anyway asks no hook; nor is anything read without a hook to ask.
 */
async function askHooks(
  deps: Pick<Deps, 'db' | 'sessions'>,
  tenant: Tenant,
  source: IdentitySource,
  actor: Actor,
  now: Date,
): Promise<Record<string, unknown>> {
  const { sessions } = deps
  const asked = await Promise.all([
    sessions.hasHook(tenant, 'before_sign_up'),
    sessions.hasHook(tenant, 'before_sign_in'),
    sessions.hasHook(tenant, 'custom_access_token'),
  ])
  if (!asked.includes(true)) return {}
  const resolved = await resolve(deps.db, tenant, source, now)
  if ('refusal' in resolved) return {}
  const { user, fresh } = resolved
  if (!user && !(source.email && source.givenEmail)) return {}
  const subject = async (): Promise<HookUser> =>
    user
      ? sessions.hookUser(tenant, user)
      : { email: source.givenEmail as string, role: fresh?.role ?? MEMBER_ROLE, roles: [] }
  return askSignInHooks(
    deps,
    tenant,
    user ? 'before_sign_in' : 'before_sign_up',
    subject,
    actor,
    source.method,
    { claims: !resolved.deferred },
  )
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
