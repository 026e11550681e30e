// POST me/export (CONTRACT §9; GDPR art. 15 and 20): everything the service holds about
// the signed-in user, in one synchronous JSON answer. The response schema is the allowlist
// (schemas.ts): rows are mapped field by field here, never passed through.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { presentAuditEvent } from '../audit/service.ts'
import { eventsConcerning } from '../audit/trail.ts'
import { userRoleNames } from '../roles/members.ts'
import { findUserById } from '../users/reads.ts'
import { presentUser } from '../users/record.ts'
import { countUnusedRecoveryCodes, identitiesOf, passkeysOf, sessionsOf } from './queries.ts'

/** The newest sessions exported (ended ones are kept at least 90 days, for the new-device check). */
export const EXPORT_SESSION_CAP = 1000
/** The newest audit events exported: about 5 MB of JSON at most. */
export const EXPORT_EVENT_CAP = 10_000

/**
 * The tables the export reads, by the query that reads them (refresh_tokens: each session's
 * newest token, where it was last used; users: findUserById). test/tables.test.ts requires
 * every table naming a user to be read here or listed in EXPORT_EXEMPT.
 */
export const EXPORT_READS = {
  users: findUserById,
  user_roles: userRoleNames,
  sessions: sessionsOf,
  refresh_tokens: sessionsOf,
  identities: identitiesOf,
  passkeys: passkeysOf,
  recovery_codes: countUnusedRecoveryCodes,
  audit_events: eventsConcerning,
} as const

/** Tables naming the user that the export leaves out, and why. */
export const EXPORT_EXEMPT: Record<string, string> = {
  remembered_devices:
    'hashes of the device tokens that skip the second factor (CONTRACT §21), nothing about the person; the account page forgets them',
  one_time_codes: 'keyed hashes of codes alive for minutes; the codes sent are in the audit events',
  webauthn_challenges: 'hashes of ceremonies in flight for five minutes, nothing about the person',
  email_conflicts:
    "the operator's report of a collision after migration 0002; it holds only the user's own address, exported in user",
  group_members:
    "the directory's groups the user is in (CONTRACT §17): the roles held through them are in user.roles; the export's fields are fixed by CONTRACT §9",
  organization_members:
    "the organizations the user belongs to (CONTRACT §18) are listed by GET me/organizations; the export's fields are fixed by CONTRACT §9",
  organization_member_roles:
    "the roles held in those organizations, listed by GET me/organizations with them; the export's fields are fixed by CONTRACT §9",
  oidc_models:
    "the provider's grants, codes and tokens: the export's fields are fixed by CONTRACT §9, and the user's connected applications are listed by GET me/applications (§11)",
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString())

export async function exportPersonalData(
  deps: Pick<Deps, 'audit' | 'db' | 'limits'>,
  tenantId: string,
  userId: string,
  actor: Actor,
) {
  // Each export reads the user's whole history: a few per hour are plenty (dataExports).
  await deps.limits.hit('dataExports', `${tenantId}:${userId}`)
  const user = await EXPORT_READS.users(deps.db, tenantId, userId)
  if (!user) fail('session_revoked')
  await deps.audit.record(deps.db, tenantId, actor, [{ action: 'GdprExportRequested', userId }])
  // One snapshot: the lists agree with each other even while the user signs in elsewhere.
  const data = await deps.db.transaction(
    async (tx) => {
      const roles = await EXPORT_READS.user_roles(tx, tenantId, userId)
      const [sessions, identities, passkeys, recoveryCodesRemaining, events] = [
        await EXPORT_READS.sessions(tx, tenantId, userId, EXPORT_SESSION_CAP + 1),
        await EXPORT_READS.identities(tx, tenantId, userId),
        await EXPORT_READS.passkeys(tx, tenantId, userId),
        await EXPORT_READS.recovery_codes(tx, tenantId, userId),
        await EXPORT_READS.audit_events(tx, tenantId, userId, EXPORT_EVENT_CAP + 1),
      ]
      return {
        roles,
        sessions,
        identities,
        passkeys,
        recoveryCodesRemaining,
        events,
      }
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  )
  const sessions = data.sessions.slice(0, EXPORT_SESSION_CAP)
  const events = data.events.slice(0, EXPORT_EVENT_CAP)
  const truncated = {
    sessions: data.sessions.length > EXPORT_SESSION_CAP,
    auditEvents: data.events.length > EXPORT_EVENT_CAP,
  }
  await deps.audit.record(deps.db, tenantId, actor, [
    {
      action: 'GdprExportCompleted',
      userId,
      metadata: { sessions: sessions.length, auditEvents: events.length, truncated },
    },
  ])
  const exported = {
    user: presentUser(user, data.roles),
    sessions: sessions.map((s) => ({
      id: s.id,
      createdAt: s.createdAt.toISOString(),
      expiresAt: s.expiresAt.toISOString(),
      revokedAt: iso(s.revokedAt),
      lastUsedAt: s.lastUsedAt.toISOString(),
      ip: s.ip,
      userAgent: s.userAgent,
      signInIp: s.signInIp,
      signInUserAgent: s.signInUserAgent,
    })),
    // The identity provider's first (its issuer is the identity's source), then the SSO
    // connections' (CONTRACT §12), which name their connection too.
    identities: [
      ...data.identities
        .filter((i) => i.kind === 'idp')
        .map((i) => ({
          issuer: i.source,
          subject: i.subject,
          email: i.email,
          createdAt: i.createdAt.toISOString(),
        })),
      ...data.identities
        .filter((i) => i.kind === 'sso')
        .map((i) => ({
          issuer: i.connectionIssuer,
          connectionId: i.source,
          subject: i.subject,
          email: i.email,
          createdAt: i.createdAt.toISOString(),
        })),
    ],
    passkeys: data.passkeys.map((p) => ({
      id: p.id,
      name: p.name,
      deviceType: p.deviceType,
      backedUp: p.backedUp,
      createdAt: p.createdAt.toISOString(),
      lastUsedAt: iso(p.lastUsedAt),
    })),
    recoveryCodesRemaining: data.recoveryCodesRemaining,
    // Where another actor (an admin, an API key) acted on the user, whose address and
    // browser those were is the admin's, not the user's: the audit log shows it to admins.
    auditEvents: events.map((event) => {
      const shown = presentAuditEvent(event)
      return event.actorId === userId ? shown : { ...shown, ip: null, userAgent: null }
    }),
  }
  return { data: exported, truncated }
}
