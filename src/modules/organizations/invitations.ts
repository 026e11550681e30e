// Invitations to an organization (CONTRACT §18): create (mailing the token after the
// commit), list, revoke, accept. The token is 256 random bits, answered once and stored as
// its SHA-256 only. One pending invitation per (organization, address): a second revokes
// the first in the same transaction, under the organization's row lock (and the partial
// unique index holds it even so). Accepting:
//   - with the invitee's access token: the signed-in user's address must be the invited
//     one (403 invite_email_mismatch, nothing spent);
//   - without one, `{token, password}` signs the address up through the sign-up path
//     (sessions/password.ts: the tenant's password policy, breached-password check,
//     enforced SSO domains, before_sign_up hook and address verification all apply), then
//     joins;
//   - a used, revoked, expired or unknown token: 400 invalid_invite.
// The token is spent in one UPDATE (queries.ts spendInvitation), so of two accepts one wins.
import { afterCommit } from '../../db/after-commit.ts'
import type { Deps } from '../../deps.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'
import { displayEmail, normalizeEmail } from '../../lib/email.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { Actor } from '../audit/recorder.ts'
import { findRolesByIds } from '../roles/members.ts'
import type { Permission } from '../roles/permissions.ts'
import { signup } from '../sessions/password.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail, findUserById } from '../users/reads.ts'
import { invitationMail } from './mail.ts'
import * as store from './queries.ts'
import {
  type AcceptInvitationBody,
  type CreateInvitationBody,
  DEFAULT_INVITATION_TTL_SECONDS,
  type InvitationRecord,
  type InvitationStatus,
} from './schemas.ts'
import { joinOrganization, resolveOrganizationRoles } from './service.ts'

type InvitationDeps = Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'mailer'>

export function invitationStatus(invitation: store.Invitation, now: Date): InvitationStatus {
  if (invitation.acceptedAt) return 'Accepted'
  if (invitation.revokedAt) return 'Revoked'
  return invitation.expiresAt <= now ? 'Expired' : 'Pending'
}

function present(
  invitation: store.Invitation,
  roleNames: Map<string, string>,
  now: Date,
): InvitationRecord {
  return {
    id: invitation.id,
    organizationId: invitation.organizationId,
    email: invitation.email,
    roles: invitation.roleIds
      .map((id) => roleNames.get(id))
      .filter((n): n is string => n !== undefined)
      .sort(),
    status: invitationStatus(invitation, now),
    createdAt: invitation.createdAt.toISOString(),
    expiresAt: invitation.expiresAt.toISOString(),
    acceptedAt: invitation.acceptedAt?.toISOString() ?? null,
    revokedAt: invitation.revokedAt?.toISOString() ?? null,
    invitedBy: invitation.invitedBy,
  }
}

async function roleNamesOf(db: Deps['db'], tenantId: string, invitations: store.Invitation[]) {
  const ids = [...new Set(invitations.flatMap((i) => i.roleIds))]
  const found = await findRolesByIds(db, tenantId, ids)
  return new Map(found.filter((r) => r.kind === 'organization').map((r) => [r.id, r.name]))
}

export async function createInvitation(
  deps: InvitationDeps,
  tenant: Tenant,
  organizationId: string,
  input: CreateInvitationBody,
  actor: Actor,
  permissions: readonly Permission[],
): Promise<{ invitation: InvitationRecord; token: string }> {
  if (!isUuid(organizationId)) fail('not_found')
  const email = normalizeEmail(input.email)
  const sendEmail = input.sendEmail ?? true
  const token = randomToken(32)
  const now = deps.clock.now()
  const ttl = input.ttlSeconds ?? DEFAULT_INVITATION_TTL_SECONDS
  const expiresAt = new Date(now.getTime() + ttl * 1000)
  return deps.db.transaction(async (tx) => {
    const organization = await store.lockOrganization(tx, tenant.id, organizationId)
    if (!organization) fail('not_found')
    const org = organization as store.Organization
    const roles = await resolveOrganizationRoles(tx, tenant.id, input.roles ?? [], 'body.roles', {
      actor,
      permissions,
    })
    const replaced = await store.revokePendingInvitation(tx, tenant.id, org.id, email, now)
    const row = await store.insertInvitation(tx, {
      tenantId: tenant.id,
      id: uuidv7(now.getTime()),
      organizationId: org.id,
      email: displayEmail(input.email),
      emailNormalized: email,
      roleIds: roles.map((r) => r.id),
      tokenHash: hashToken(token),
      invitedBy: actor.id,
      createdAt: now,
      expiresAt,
    })
    await deps.audit.record(tx, tenant.id, actor, [
      ...replaced.map((old) => ({
        action: 'OrganizationInvitationRevoked' as const,
        email,
        metadata: { organizationId: org.id, invitationId: old.id, reason: 'replaced' },
      })),
      {
        action: 'OrganizationInvitationCreated',
        email,
        metadata: {
          organizationId: org.id,
          invitationId: row.id,
          roles: roles.map((r) => r.name),
          emailSent: sendEmail,
        },
      },
    ])
    // After the commit: a rolled-back invitation is never mailed.
    if (sendEmail) {
      afterCommit(tx, () =>
        deps.mailer.deliver(invitationMail(deps.config, tenant, org, row, token, actor.language)),
      )
    }
    const names = new Map(roles.map((r) => [r.id, r.name]))
    return { invitation: present(row, names, now), token }
  })
}

export async function listInvitationPage(
  deps: Pick<Deps, 'clock' | 'db'>,
  tenantId: string,
  organizationId: string,
  query: { limit: number; cursor?: string },
) {
  if (!isUuid(organizationId)) fail('not_found')
  if (!(await store.findOrganization(deps.db, tenantId, organizationId))) fail('not_found')
  const page = await readPage(
    query,
    (window) => store.invitationPage(deps.db, tenantId, organizationId, window),
    (i) => i,
  )
  const names = await roleNamesOf(deps.db, tenantId, page.items)
  const now = deps.clock.now()
  return { items: page.items.map((i) => present(i, names, now)), nextCursor: page.nextCursor }
}

export async function revokeInvitation(
  deps: Pick<Deps, 'audit' | 'clock' | 'db'>,
  tenantId: string,
  organizationId: string,
  invitationId: string,
  actor: Actor,
): Promise<void> {
  if (!isUuid(organizationId) || !isUuid(invitationId)) fail('not_found')
  const now = deps.clock.now()
  await deps.db.transaction(async (tx) => {
    const found = await store.findInvitation(tx, tenantId, organizationId, invitationId)
    if (!found) fail('not_found')
    const revoked = await store.revokeInvitation(tx, tenantId, organizationId, invitationId, now)
    // An accepted or revoked one is no longer pending: nothing to revoke.
    if (!revoked) fail('invalid_invite', { status: 400, message: 'The invitation is not pending.' })
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'OrganizationInvitationRevoked',
        email: found?.emailNormalized ?? null,
        metadata: { organizationId, invitationId, reason: 'admin' },
      },
    ])
  })
}

const invalidInvite = () => new AppError('invalid_invite', { status: 400 })

export interface Accepted {
  membership: { id: string; name: string; roles: string[] }
  /** The new account's session (a new address, where no verification is asked first). */
  session: TokenEnvelope | null
  verificationRequired: boolean
}

/**
 * POST organization-invitations/accept. `userId` is the signed-in caller (an access token),
 * or null for a new address, which then needs `password`.
 */
export async function acceptInvitation(
  deps: Pick<
    Deps,
    'audit' | 'breached' | 'clock' | 'config' | 'db' | 'limits' | 'mailer' | 'sessions'
  >,
  tenant: Tenant,
  input: AcceptInvitationBody,
  userId: string | null,
  actor: Actor,
): Promise<Accepted> {
  // An unknown token is a failed guess (CONTRACT §8): the try is reserved before the lookup
  // and given back once the token turns out to exist.
  const ip = actor.ip ?? ''
  await deps.limits.hit('loginFailuresPerIp', ip)
  const invitation = await store.findInvitationByHash(deps.db, tenant.id, hashToken(input.token))
  if (!invitation) throw invalidInvite()
  await deps.limits.refund('loginFailuresPerIp', ip)
  if (invitationStatus(invitation, deps.clock.now()) !== 'Pending') throw invalidInvite()

  let session: TokenEnvelope | null = null
  let verificationRequired = false
  let newUser = false
  let user: { id: string; emailNormalized: string } | undefined
  if (userId) {
    if (input.password !== undefined) {
      fail('validation', {
        details: {
          issues: [{ path: 'body.password', message: 'must be left out with an access token' }],
        },
      })
    }
    user = await findUserById(deps.db, tenant.id, userId)
    if (!user) fail('session_revoked')
    if (user?.emailNormalized !== invitation.emailNormalized) fail('invite_email_mismatch')
  } else {
    if (input.password === undefined) {
      fail('validation', {
        details: { issues: [{ path: 'body.password', message: 'is required without a token' }] },
      })
    }
    // The sign-up path itself: policies, hooks and verification as for any sign-up; the
    // hooks are told it is an invitation's (CONTRACT §21's `invite`, as the SPEC's invites).
    const result = await signup(
      deps,
      tenant,
      { email: invitation.email, password: input.password as string },
      actor,
      'invite',
    )
    if ('accessToken' in result) session = result
    else verificationRequired = true
    newUser = true
    user = await findUserByEmail(deps.db, tenant.id, invitation.emailNormalized)
    if (!user) throw invalidInvite()
  }
  const member = user as { id: string; emailNormalized: string }
  const now = deps.clock.now()
  const membership = await deps.db.transaction(async (tx) => {
    const spent = await store.spendInvitation(tx, tenant.id, invitation.id, member.id, now)
    if (!spent) throw invalidInvite()
    const organization = await store.lockOrganization(tx, tenant.id, spent.organizationId)
    if (!organization) throw invalidInvite()
    const roles = (await findRolesByIds(tx, tenant.id, spent.roleIds)).filter(
      (r) => r.kind === 'organization',
    )
    const who: Actor = { ...actor, type: 'user', id: member.id }
    const entries = await joinOrganization(
      tx,
      tenant.id,
      spent.organizationId,
      member,
      roles,
      'invite',
      now,
      'add',
    )
    await deps.audit.record(tx, tenant.id, who, [
      {
        action: 'OrganizationInvitationAccepted',
        userId: member.id,
        email: member.emailNormalized,
        metadata: { organizationId: spent.organizationId, invitationId: spent.id, newUser },
      },
      ...entries,
    ])
    const held = await store.memberRoles(tx, tenant.id, spent.organizationId, [member.id])
    return {
      id: spent.organizationId,
      name: (organization as store.Organization).name,
      roles: held.get(member.id) ?? [],
    }
  })
  return { membership, session, verificationRequired }
}

/** What the hosted acceptance page shows before acting: the organization and the address. */
export async function describeInvitation(
  deps: Pick<Deps, 'clock' | 'db'>,
  tenantId: string,
  token: string,
) {
  const invitation = await store.findInvitationByHash(deps.db, tenantId, hashToken(token))
  if (!invitation || invitationStatus(invitation, deps.clock.now()) !== 'Pending') return undefined
  const organization = await store.findOrganization(deps.db, tenantId, invitation.organizationId)
  if (!organization) return undefined
  const existing = await findUserByEmail(deps.db, tenantId, invitation.emailNormalized)
  return {
    organization: organization.name,
    email: invitation.email,
    hasAccount: !!existing,
  }
}
