// The one internal API for the audit log. Services call `audit(handle, ...)` inside the
// transaction that makes the change, so an event is stored exactly when its change is.
import { afterCommit } from '../../db/after-commit.ts'
import type { Handle } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { type AuditEventOf, type AuditWebhookEvent, webhookBody } from '../webhooks/events.ts'
import type { AuditAction } from './actions.ts'
import type { AuditEntry, AuditEntryOf, AuditMetadata } from './events.ts'
import { presentAuditEvent } from './present.ts'
import { insertAuditEvents } from './queries.ts'

export type { AuditEntry }

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
  /**
   * The request's Accept-Language (the hosted pages send their locale): the language of a
   * mail to someone with no `locale` of their own (CONTRACT §20). Not stored.
   */
  language?: string | null
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, ip: null, userAgent: null }

export class AuditRecorder {
  private readonly clock: Clock
  constructor(clock: Clock) {
    this.clock = clock
  }

  private readonly listeners: ((entries: AuditEntry[]) => void)[] = []

  /**
   * Tells `listener` of the entries of every write once it committed (the metrics count
   * sign-in outcomes from them); a write rolled back is never told.
   */
  subscribe(listener: (entries: AuditEntry[]) => void): void {
    this.listeners.push(listener)
  }

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
    const rows = entries.map((e) => {
      const row = {
        id: uuidv7(now.getTime()),
        action: e.action,
        userId: e.userId ?? null,
        email: e.email ?? null,
        // Stored as jsonb and shown as an object (present.ts): the typed map is the writer's.
        metadata: (e.metadata ?? {}) as Record<string, unknown>,
      }
      // What a webhook subscribed to it is sent (CONTRACT §13), queued by the same statement.
      return { ...row, webhookPayload: payloadOf(tenantId, { ...write, ...row }, e) }
    })
    await insertAuditEvents(handle, write, rows)
    if (this.listeners.length > 0) {
      afterCommit(handle, () => {
        for (const listener of this.listeners) listener(entries)
      })
    }
  }
}

/**
 * The webhook body of one entry (webhooks/events.ts), typed by its action: the presented
 * row with the entry's own metadata (`{}` where the action's schema lets it be absent).
 */
function payloadOf<A extends AuditAction>(
  tenantId: string,
  stored: Parameters<typeof presentAuditEvent>[0],
  entry: AuditEntryOf<A>,
): AuditWebhookEvent<A> {
  // An entry may leave out its metadata (stored as `{}`); the schema's required fields are
  // the call sites' to write (test/webhook-events.test.ts validates recorded events).
  const metadata = (entry.metadata ?? {}) as AuditMetadata[A]
  const event: AuditEventOf<A> = { ...presentAuditEvent(stored), action: entry.action, metadata }
  return webhookBody(tenantId, event)
}
