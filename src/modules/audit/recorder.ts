// The one internal API for the audit log. Services call `audit(handle, ...)` inside the
// transaction that makes the change, so an event is stored exactly when its change is.
import type { Handle } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { appendOutbox } from '../webhooks/queries.ts'
import type { AuditAction } from './actions.ts'
import { presentAuditEvent } from './present.ts'
import { insertAuditEvents } from './queries.ts'

/** Who acts and from where: built once per request (plugins/auth.ts). */
export interface Actor {
  type: 'user' | 'apiKey' | 'system' | 'anonymous'
  id: string | null
  ip: string | null
  userAgent: string | null
  /**
   * The OpenID application the hosted pages sign in for, named only by their own
   * in-process call (lib/served-client.ts); not stored as such, UserLogin's metadata.
   */
  servedClientId?: string
}

export interface AuditEntry {
  action: AuditAction
  /** The user the event concerns. */
  userId?: string | null
  /** The address concerned, kept for search (a failed login's attempted email). */
  email?: string | null
  metadata?: Record<string, unknown>
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, ip: null, userAgent: null }

export class AuditRecorder {
  private readonly clock: Clock
  constructor(clock: Clock) {
    this.clock = clock
  }

  /** Told of the entries of every write (the metrics count sign-in outcomes from them). */
  onRecord: ((entries: AuditEntry[]) => void) | undefined

  async record(handle: Handle, tenantId: string, actor: Actor, entries: AuditEntry[]) {
    if (entries.length === 0) return
    const now = this.clock.now()
    const write = {
      tenantId,
      actorType: actor.type,
      actorId: actor.id,
      ip: actor.ip,
      userAgent: actor.userAgent?.slice(0, 512) ?? null,
      createdAt: now,
    }
    const rows = entries.map((e) => ({
      id: uuidv7(now.getTime()),
      action: e.action,
      userId: e.userId ?? null,
      email: e.email ?? null,
      metadata: e.metadata ?? {},
    }))
    await insertAuditEvents(handle, write, rows)
    // The webhook outbox (CONTRACT §13), on the same handle: a delivery exists exactly when
    // its event committed.
    await appendOutbox(
      handle,
      tenantId,
      now,
      rows.map((row) => ({
        id: row.id,
        action: row.action,
        payload: webhookBody(tenantId, presentAuditEvent({ ...write, ...row })),
      })),
    )
    this.onRecord?.(entries)
  }
}

/** A Standard Webhooks body (CONTRACT §13): the event as the audit list shows it. */
export function webhookBody(tenantId: string, event: { action: string; createdAt: string }) {
  return { type: event.action, timestamp: event.createdAt, data: { tenantId, event } }
}
