// POST users/{userId}/erase (CONTRACT §9; GDPR art. 17): the user and everything an export
// shows of it, but the audit rows, are removed at once; the audit rows keep their action,
// actor and time and lose the address, the ip and the user agent.
//
// Revocation must outlive the rows. Other instances learn of ended sessions from the
// database's revocation feed (sessions.revoked_at, read once a second), and deleting the
// user deletes its sessions (ON DELETE CASCADE): a session row deleted before an instance
// read it would leave that instance accepting its access tokens for up to 15 minutes. So
// the erasure runs in two steps:
//   1. one transaction: GdprErasureRequested, the user soft-deleted (no new sign-in finds
//      it), its live sessions revoked; committed and announced (memory, Redis);
//   2. once every instance has read the feed (two poll periods and a margin), one
//      transaction: any session a racing sign-in opened meanwhile is revoked (then step 2
//      waits again), else the user row is deleted with everything that cascades from it,
//      the audit rows are scrubbed, pending invitations to the address revoked, and
//      GdprErasureCompleted recorded.
// Should step 2 fail, the user stays soft-deleted with its sessions ended, and erasing it
// again (a soft-deleted user may be erased) finishes the work.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { type AuditEvent, eventsAbout, scrubEvents } from '../audit/trail.ts'
import { lockAddress, revokePendingFor } from '../invites/pending.ts'
import { deleteAccountModels } from '../oidc/grants.ts'
import { deleteChallengesOf } from '../passkeys/credentials.ts'
import type { RevokeUserSessions } from '../sessions/service.ts'
import { lockActiveAdmins, lockUserInAnyState, type User } from '../users/reads.ts'
import { deleteEmailConflictOf, hardDeleteUser, updateUser } from '../users/writes.ts'
import { identitiesOf } from './queries.ts'
import { scrubEvent } from './scrub.ts'

/**
 * The user's rows that deleting the user row does not reach (no ON DELETE CASCADE from
 * users leads to them), each with the query that deletes them, run before the user row
 * goes. test/tables.test.ts requires every table naming a user to
 * cascade from users, be listed here or in ERASURE_EXEMPT.
 */
export const ERASURE_DELETES = {
  // The user's grants to the tenant's applications, with their codes, tokens and provider
  // sessions (CONTRACT §11): oidc_models names the user as account_id.
  oidc_models: deleteAccountModels,
  // Passkey ceremonies in flight for the user (registration names it).
  webauthn_challenges: deleteChallengesOf,
  // The migration 0002 report of addresses that collided once normalised.
  email_conflicts: deleteEmailConflictOf,
} satisfies Record<string, (tx: Handle, tenantId: string, userId: string) => Promise<unknown>>

/** Tables naming the user that the erasure keeps, and why. */
export const ERASURE_EXEMPT: Record<string, string> = {
  audit_events:
    'kept with their action, actor and time, scrubbed of the address, ip and user agent (CONTRACT §9, scrubAudit)',
}

type ErasureDeps = Pick<Deps, 'audit' | 'clock' | 'config' | 'sessions'>

/** Rounds of step 2 that may find a session opened by a racing sign-in before it gives up. */
const MAX_ROUNDS = 5

/** How long a revoked session row must stay for every instance's feed to read it. */
export function settleMs(config: Pick<Deps['config'], 'revocationPollMs'>): number {
  return 2 * config.revocationPollMs + 500
}

export async function eraseUser(
  deps: ErasureDeps,
  tenantId: string,
  userId: string,
  actor: Actor,
): Promise<void> {
  let ended = await deps.sessions.revoking(async (tx, revoke) => {
    // The admins first, then the user: the order of every change that can remove an admin.
    const admins = await lockActiveAdmins(tx, tenantId)
    const user = await lockUserInAnyState(tx, tenantId, userId)
    if (!user) fail('not_found')
    if (admins.length === 1 && admins[0] === user.id) fail('last_admin')
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'GdprErasureRequested', userId, metadata: { by: actor.type } },
    ])
    if (user.deletedAt === null) {
      const now = deps.clock.now()
      await updateUser(tx, tenantId, userId, { deletedAt: now, updatedAt: now })
    }
    return (await revoke(tenantId, userId, actor, 'erased')).length
  })
  for (let round = 1; ; round++) {
    if (ended > 0) await sleep(settleMs(deps.config))
    const outcome = await deps.sessions.revoking((tx, revoke) =>
      finish(deps, tx, revoke, tenantId, userId, actor, round === MAX_ROUNDS),
    )
    if (outcome === 'done') return
    ended = outcome.ended
  }
}

/** Step 2; answers 'done', or the sessions it had to end first (then it waits again). */
async function finish(
  deps: ErasureDeps,
  tx: Handle,
  revoke: RevokeUserSessions,
  tenantId: string,
  userId: string,
  actor: Actor,
  lastRound: boolean,
): Promise<'done' | { ended: number }> {
  // The row lock also holds off a sign-in: a new session row must share-lock its user.
  const user = await lockUserInAnyState(tx, tenantId, userId)
  if (!user) return 'done' // a parallel erasure of the same user finished first
  const late = await revoke(tenantId, userId, actor, 'erased')
  if (late.length > 0 && !lastRound) return { ended: late.length }
  // The address is locked first: an invite to it made while the scrub reads would
  // otherwise leave an InviteCreated row naming it.
  await lockAddress(tx, tenantId, user.emailNormalized)
  // Only the identity provider's addresses, as before the one identities table: an SSO
  // identity's address that differs from the account's (its IdP changed it) stays in the
  // audit rows, a gap to close on its own, with its test.
  const linked = (await identitiesOf(tx, tenantId, userId))
    .filter((i) => i.kind === 'idp')
    .map((i) => i.email)
  const scrubbed = await scrubAudit(tx, tenantId, user, linked)
  const now = deps.clock.now()
  const invites = await revokePendingFor(tx, tenantId, user.emailNormalized, now)
  for (const remove of Object.values(ERASURE_DELETES)) await remove(tx, tenantId, userId)
  await hardDeleteUser(tx, tenantId, userId)
  // Named by id only: these rows never hold the address.
  await deps.audit.record(tx, tenantId, actor, [
    ...invites.map((invite) => ({
      action: 'InviteRevoked' as const,
      metadata: { inviteId: invite.id, reason: 'erasure' },
    })),
    {
      action: 'GdprErasureCompleted',
      userId,
      metadata: { auditEventsScrubbed: scrubbed, invitesRevoked: invites.length },
    },
  ])
  return 'done'
}

/** Scrubs every audit row of the tenant that is about the user or names its address. */
async function scrubAudit(
  tx: Handle,
  tenantId: string,
  user: User,
  /** Addresses of the user's linked identities (failed IdP sign-ins name them). */
  linked: (string | null)[],
): Promise<number> {
  // The erasure's own request record names the user by id only; its ip is the admin's.
  const isErasureRecord = (e: { action: string; actorId: string | null }) =>
    e.action.startsWith('GdprErasure') && e.actorId !== user.id
  // The address as stored, and as normalised (how events record it).
  const addresses = [
    ...new Set([user.emailNormalized, user.email, ...linked.filter((e): e is string => !!e)]),
  ]
  const found = new Map<string, AuditEvent>()
  for (const address of addresses) {
    for (const event of await eventsAbout(tx, tenantId, user.id, address))
      found.set(event.id, event)
  }
  const changes = [...found.values()]
    .map((event) => scrubEvent(event, user.id, addresses, isErasureRecord))
    .filter((change) => change !== undefined)
  await scrubEvents(tx, tenantId, changes)
  return changes.length
}
