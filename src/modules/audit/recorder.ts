// The one internal API for the audit log. Services call `audit(handle, ...)` inside the
// transaction that makes the change, so an event is stored exactly when its change is.
import type { Handle } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { AuditAction } from './actions.ts'
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
    await insertAuditEvents(
      handle,
      {
        tenantId,
        actorType: actor.type,
        actorId: actor.id,
        ip: actor.ip,
        userAgent: actor.userAgent?.slice(0, 512) ?? null,
        createdAt: now,
      },
      entries.map((e) => ({
        id: uuidv7(now.getTime()),
        action: e.action,
        userId: e.userId ?? null,
        email: e.email ?? null,
        metadata: e.metadata ?? {},
      })),
    )
    this.onRecord?.(entries)
  }
}
