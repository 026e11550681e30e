// An audit event as the API shows it: the audit list, the export and webhook bodies.
import type { AuditEvent } from './queries.ts'

/** The event as the list and the export show it; `userEmail` is a live user's address. */
export function presentAuditEvent(e: AuditEvent, emails?: Map<string, string>) {
  const userEmail = e.userId === null ? undefined : emails?.get(e.userId)
  return {
    id: e.id,
    action: e.action,
    actorType: e.actorType as 'user' | 'apiKey' | 'system' | 'anonymous',
    actorId: e.actorId,
    userId: e.userId,
    ip: e.ip,
    userAgent: e.userAgent,
    metadata: e.metadata ?? {},
    createdAt: e.createdAt.toISOString(),
    ...(userEmail === undefined ? {} : { userEmail }),
  }
}
