// Invitations (SPEC, Invite state table; CONTRACT §2): create (mailing the token), list,
// revoke. Accepting is in accept.ts. The token is 256 random bits, returned once and
// stored as its SHA-256 only.
import { afterCommit } from '../../db/after-commit.ts'
import type { Deps } from '../../deps.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'
import { displayEmail, normalizeEmail } from '../../lib/email.ts'
import { fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { Actor } from '../audit/recorder.ts'
import { resolveRoleNames } from '../roles/grant.ts'
import { isAdminRole, MEMBER_ROLE, type Permission } from '../roles/permissions.ts'
import { refuseEscalation } from '../roles/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail } from '../users/reads.ts'
import { inviteMail } from './mail.ts'
import * as store from './queries.ts'
import {
  type CreateInviteBody,
  DEFAULT_TTL_SECONDS,
  type InviteRecord,
  type InviteStatus,
  type ListInvitesQuery,
} from './schemas.ts'

type Role = InviteRecord['role']

export function inviteStatus(invite: store.Invite, now: Date): InviteStatus {
  if (invite.acceptedAt) return 'Accepted'
  if (invite.revokedAt) return 'Revoked'
  return invite.expiresAt <= now ? 'Expired' : 'Pending'
}

export function presentInvite(invite: store.Invite, now: Date): InviteRecord {
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role as Role,
    roles: invite.roles,
    status: inviteStatus(invite, now),
    createdAt: invite.createdAt.toISOString(),
    expiresAt: invite.expiresAt.toISOString(),
    acceptedAt: invite.acceptedAt?.toISOString() ?? null,
    revokedAt: invite.revokedAt?.toISOString() ?? null,
    invitedBy: invite.invitedBy,
  }
}

/**
 * Invites an address: 409 already_member when it belongs to an Active or Suspended user of
 * the tenant (CONTRACT §2: "an active member"); a Pending user, who never signed in, may
 * be invited and is taken over on accept. A pending invitation for the same address is
 * revoked (superseded) by the new one. An API key cannot invite an Admin: a leaked key
 * would otherwise mint itself an Admin user token, with the rights keys are refused
 * (CONTRACT §4); nor can a user who is no Admin (403 permission_required, CONTRACT §17).
 * `roles` (custom, CONTRACT §17) must each be a tenant role (else 400 validation); they are
 * given at acceptance, each held in full by the inviter (no escalation).
 */
export async function createInvite(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'mailer'>,
  tenant: Tenant,
  input: CreateInviteBody,
  actor: Actor,
  baseRoleAuthority: boolean,
  permissions: readonly Permission[],
) {
  const email = normalizeEmail(input.email)
  const role = input.role ?? MEMBER_ROLE
  if (isAdminRole(role) && actor.type === 'apiKey') {
    fail('api_key_not_allowed', { message: 'An API key cannot invite an Admin.' })
  }
  // Making an Admin is an Admin's act (CONTRACT §17), by invitation too.
  if (isAdminRole(role) && !baseRoleAuthority) {
    fail('permission_required', { message: 'Only an Admin may invite an Admin.' })
  }
  const sendEmail = input.sendEmail ?? true
  const token = randomToken(32)
  const now = deps.clock.now()
  const expiresAt = new Date(now.getTime() + (input.ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000)
  const invite = await deps.db.transaction(async (tx) => {
    await store.lockAddress(tx, tenant.id, email)
    const existing = await findUserByEmail(tx, tenant.id, email)
    if (existing && existing.status !== 'Pending') fail('already_member')
    const granted = await resolveRoleNames(tx, tenant.id, input.roles ?? [])
    if ('unknown' in granted) {
      const name = (input.roles ?? [])[granted.unknown]
      fail('validation', {
        details: {
          issues: [{ path: `body.roles.${granted.unknown}`, message: `unknown role ${name}` }],
        },
      })
    }
    // Granting by invitation is granting (CONTRACT §17): only roles whose every permission
    // and resource scope the inviter holds itself, else 403 permission_required.
    await refuseEscalation(tx, tenant.id, { actor, permissions }, granted.roles)
    const roles = granted.roles.map((r) => r.name)
    const superseded = await store.revokePendingFor(tx, tenant.id, email, now)
    const row = await store.insertInvite(tx, {
      tenantId: tenant.id,
      id: uuidv7(now.getTime()),
      email: displayEmail(input.email),
      emailNormalized: email,
      role,
      roles,
      tokenHash: hashToken(token),
      invitedBy: actor.id,
      createdAt: now,
      expiresAt,
    })
    await deps.audit.record(tx, tenant.id, actor, [
      ...superseded.map((old) => ({
        action: 'InviteRevoked' as const,
        email,
        metadata: { inviteId: old.id, reason: 'superseded', supersededBy: row.id },
      })),
      {
        action: 'InviteCreated',
        email,
        metadata: {
          inviteId: row.id,
          role,
          ...(roles.length > 0 ? { roles } : {}),
          expiresAt: expiresAt.toISOString(),
          sendEmail,
        },
      },
    ])
    // After the commit: a rolled-back invitation is never mailed.
    if (sendEmail) {
      afterCommit(tx, () => deps.mailer.deliver(inviteMail(deps.config, tenant, row, token)))
    }
    return row
  })
  return { token, invite: presentInvite(invite, now) }
}

export async function listInvitePage(
  deps: Pick<Deps, 'clock' | 'db'>,
  tenantId: string,
  query: ListInvitesQuery,
) {
  const now = deps.clock.now()
  return readPage(
    query,
    ({ limit, after }) =>
      store.listInvites(deps.db, tenantId, {
        limit,
        after,
        includeAccepted: query.includeAccepted,
        includeRevoked: query.includeRevoked,
      }),
    (i) => presentInvite(i, now),
  )
}

/**
 * Revokes an open invitation (an expired one too). Revoking a revoked one changes nothing
 * and answers ok; an accepted one is 409 invite_used; an unknown or foreign id is 404.
 */
export async function revokeInvite(
  deps: Pick<Deps, 'audit' | 'clock' | 'db'>,
  tenantId: string,
  id: string,
  actor: Actor,
) {
  if (!isUuid(id)) fail('not_found')
  await deps.db.transaction(async (tx) => {
    const invite = await store.revokeInvite(tx, tenantId, id, deps.clock.now())
    if (!invite) {
      const existing = await store.findInvite(tx, tenantId, id)
      if (!existing) fail('not_found')
      if (existing.acceptedAt) fail('invite_used')
      return
    }
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'InviteRevoked',
        email: invite.emailNormalized,
        metadata: { inviteId: invite.id, reason: 'revoked' },
      },
    ])
  })
}
