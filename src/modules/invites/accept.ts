// POST /v1/invites/accept (SPEC, Invites; CONTRACT §2): the invitee chooses a password and
// becomes an Active user with the invitation's role and a verified address, signed in.
// A Pending user of the address (a passwordless JIT sign-up that never finished) is taken
// over rather than duplicated. Unknown or revoked token: 401 invalid_invite; expired: 401
// invite_expired (InviteExpired recorded once); accepted already: 409 invite_used; the
// address taken meanwhile by an Active or Suspended user: 409 already_member (the
// invitation stays unspent); an address under an enforced SSO domain: 403 sso_required.
import type { Handle } from '../../db/client.ts'
import { findInviteByTokenHash } from '../../db/cross-tenant.ts'
import type { Deps } from '../../deps.ts'
import { hashToken } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { ssoRequired } from '../federation/enforce.ts'
import { grantRoles } from '../roles/grant.ts'
import { baseRole } from '../roles/permissions.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { lockPendingUser, type User } from '../users/reads.ts'
import { createUser, prepareChosenPassword } from '../users/service.ts'
import { updateUser } from '../users/writes.ts'
import * as store from './queries.ts'
import type { AcceptInviteBody } from './schemas.ts'

export async function acceptInvite(
  deps: Pick<Deps, 'audit' | 'breached' | 'clock' | 'db' | 'limits' | 'sessions'>,
  input: AcceptInviteBody,
  actor: Actor,
): Promise<TokenEnvelope & { tenantSlug: string }> {
  // An unknown token is a failed first factor of this address (CONTRACT §8): the try is
  // reserved before the lookup and given back once the token turns out to exist.
  const ip = actor.ip ?? ''
  await deps.limits.hit('loginFailuresPerIp', ip)
  const found = await findInviteByTokenHash(deps.db, hashToken(input.token))
  if (!found) fail('invalid_invite')
  await deps.limits.refund('loginFailuresPerIp', ip)
  const { invite, tenant } = found
  await refuseUnusable(deps, tenant, invite, actor)
  // CONTRACT §12: an address under an enforced SSO domain signs in through its connection;
  // a password session opened here would go round it (issue 36 P2). As there, an Admin
  // (here: an invitation to the Admin role) is excepted. The invitation stays unspent.
  if (await ssoRequired(deps.db, tenant.id, invite.emailNormalized, { role: invite.role })) {
    fail('sso_required')
  }
  // CONTRACT §21: the tenant's before_sign_up hook may refuse the invitee (the invitation
  // stays unspent); then the access token's custom claims. Before the transaction.
  const subject = async () => ({ email: invite.email, role: invite.role, roles: invite.roles })
  await deps.sessions.gate(tenant, 'before_sign_up', subject, actor, 'invite')
  const claims = await deps.sessions.claimsFor(tenant, subject, actor, 'invite')
  // The password is checked before the invitation is spent: a weak one costs nothing.
  const passwordHash = await prepareChosenPassword(deps, tenant, input.password, invite.email)

  const envelope = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now()
    const spent = await store.spendInvite(tx, tenant.id, invite.id, now)
    if (!spent) return undefined
    const { user, pending } = await joinInvitee(deps, tx, tenant, spent, passwordHash)
    await store.setAcceptedUser(tx, tenant.id, spent.id, user.id)
    const who: Actor = { ...actor, type: 'user', id: user.id }
    const email = spent.emailNormalized
    const entries: AuditEntry[] = [
      {
        action: 'InviteAccepted',
        userId: user.id,
        email,
        metadata: {
          inviteId: spent.id,
          role: spent.role,
          invitedBy: spent.invitedBy,
          ...(pending ? { pendingUserActivated: true } : {}),
        },
      },
    ]
    // A Pending user's UserSignup was recorded when it joined; only the proven address is new.
    if (!pending) {
      entries.push(
        {
          action: 'UserSignup',
          userId: user.id,
          email,
          metadata: { via: 'invite', inviteId: spent.id },
        },
        // The invitation proved the address (the token came by mail to it).
        {
          action: 'UserEmailVerified',
          userId: user.id,
          email,
          metadata: { via: 'invite', inviteId: spent.id },
        },
      )
    } else if (!pending.emailVerified) {
      entries.push({
        action: 'UserEmailVerified',
        userId: user.id,
        email,
        metadata: { via: 'invite', inviteId: spent.id },
      })
    }
    // The invitation's custom roles (CONTRACT §17), those that still exist.
    entries.push(...(await grantRoles(tx, tenant.id, user, spent.roles, 'invite', now)))
    await deps.audit.record(tx, tenant.id, who, entries)
    return deps.sessions.start(tx, tenant, user, who, [], claims)
  })
  if (envelope) return { ...envelope, tenantSlug: tenant.slug }

  // Another accept (or a revocation) came first: answer as for its new state.
  const current = await store.findInvite(deps.db, tenant.id, invite.id)
  if (current) await refuseUnusable(deps, tenant, current, actor)
  fail('invalid_invite')
}

class AddressTaken extends Error {}

/**
 * The invitee's user, inside the transaction that spends the invitation: the address's
 * Pending user taken over (password, the invitation's role, Active, address verified),
 * else a new Active user. `pending` is the Pending row as it was, when one was taken over.
 * An Active or Suspended user of the address: 409 already_member (CONTRACT §2).
 */
async function joinInvitee(
  deps: Pick<Deps, 'clock'>,
  tx: Handle,
  tenant: Tenant,
  invite: store.Invite,
  passwordHash: string,
): Promise<{ user: User; pending?: User }> {
  const role = baseRole(invite.role)
  const takeOver = async (pending: User) => {
    const user = await updateUser(tx, tenant.id, pending.id, {
      passwordHash,
      role,
      status: 'Active',
      emailVerified: true,
      updatedAt: deps.clock.now(),
    })
    return { user: user as User, pending }
  }
  const pending = await lockPendingUser(tx, tenant.id, invite.emailNormalized)
  if (pending) return takeOver(pending)
  try {
    const user = await createUser(
      deps,
      tx,
      tenant,
      { email: invite.email, passwordHash, role, status: 'Active', emailVerified: true },
      () => {
        throw new AddressTaken()
      },
    )
    return { user }
  } catch (error) {
    if (!(error instanceof AddressTaken)) throw error
  }
  // The address was taken since the look-up: by a concurrent JIT sign-up (Pending, which
  // this new statement now sees), or by a user that keeps it.
  const late = await lockPendingUser(tx, tenant.id, invite.emailNormalized)
  if (!late) fail('already_member')
  return takeOver(late)
}

async function refuseUnusable(
  deps: Pick<Deps, 'audit' | 'clock' | 'db'>,
  tenant: Tenant,
  invite: store.Invite,
  actor: Actor,
) {
  if (invite.acceptedAt) fail('invite_used')
  if (invite.revokedAt) fail('invalid_invite')
  const now = deps.clock.now()
  if (invite.expiresAt > now) return
  // InviteExpired is recorded by the first late accept only (CONTRACT §2: "once").
  await deps.db.transaction(async (tx) => {
    if (await store.markExpiryRecorded(tx, tenant.id, invite.id, now)) {
      await deps.audit.record(tx, tenant.id, actor, [
        {
          action: 'InviteExpired',
          email: invite.emailNormalized,
          metadata: { inviteId: invite.id, expiredAt: invite.expiresAt.toISOString() },
        },
      ])
    }
  })
  fail('invite_expired')
}
