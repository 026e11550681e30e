// The webhook events (CONTRACT §13), derived from the typed map (audit/events.ts): for each
// audit action its Standard Webhooks body `{type, timestamp, data: {tenantId, event}}`, as a
// static type (what recorder.ts queues) and as a JSON schema (the OpenAPI document's
// `webhooks`, plugins/openapi.ts), plus the WebhookTest event that `POST webhooks/{id}/test`
// sends. `event` is the audit event as the audit list shows it, its `metadata` the action's.
import { type Static, type TSchema, Type } from 'typebox'
import { DateTime } from '../../schemas.ts'
import { AUDIT_ACTIONS, type AuditAction } from '../audit/actions.ts'
import { AUDIT_EVENTS, type AuditMetadata } from '../audit/events.ts'
import { AUDIT_EVENT_PROPERTIES } from '../audit/schemas.ts'

/** An audit event as the list shows it (audit/present.ts), `action` and `metadata` aside. */
type PresentedFields = Omit<
  Static<ReturnType<typeof auditEventSchema>>,
  'action' | 'metadata' | 'userEmail'
> & { userEmail?: string }

/** The audit event of action `A` as a webhook's `data.event` carries it. */
export type AuditEventOf<A extends AuditAction> = PresentedFields & {
  action: A
  metadata: AuditMetadata[A]
}

/** The WebhookTest event's `data.event` (not an audit event: never in the audit log). */
export const WEBHOOK_TEST = 'WebhookTest'
const WebhookTestMetadata = Type.Object(
  { webhookId: Type.String() },
  { additionalProperties: false, description: 'The endpoint tested.' },
)
const WebhookTestEventFields = Type.Object(
  {
    id: Type.String(),
    action: Type.Literal(WEBHOOK_TEST),
    metadata: WebhookTestMetadata,
    createdAt: DateTime,
  },
  { additionalProperties: false },
)
export type WebhookTestEvent = Static<typeof WebhookTestEventFields>

/** Every event type a webhook is sent: the audit actions and WebhookTest. */
export type WebhookEventType = AuditAction | typeof WEBHOOK_TEST

/** A delivery's body (Standard Webhooks): `type` is the event's action. */
export type WebhookBody<T extends string, E> = {
  type: T
  timestamp: string
  data: { tenantId: string; event: E }
}

/** The body of a delivery of audit action `A`. */
export type AuditWebhookEvent<A extends AuditAction> = WebhookBody<A, AuditEventOf<A>>

/** Any delivery's body: the union over every event type, `type` telling them apart. */
export type WebhookEvent =
  | { [A in AuditAction]: AuditWebhookEvent<A> }[AuditAction]
  | WebhookBody<typeof WEBHOOK_TEST, WebhookTestEvent>

/**
 * A Standard Webhooks body (CONTRACT §13): the event as the audit list shows it; the append
 * statement (audit/queries.ts) adds the concerned user's `userEmail`, which only it reads.
 */
export function webhookBody<E extends AuditEventOf<AuditAction> | WebhookTestEvent>(
  tenantId: string,
  event: E,
): WebhookBody<E['action'], E> {
  return { type: event.action, timestamp: event.createdAt, data: { tenantId, event } }
}

function auditEventSchema<A extends AuditAction>(action: A) {
  return Type.Object(
    {
      ...AUDIT_EVENT_PROPERTIES,
      action: Type.Literal(action),
      metadata: AUDIT_EVENTS[action] as (typeof AUDIT_EVENTS)[A],
    },
    { additionalProperties: false },
  )
}

/** The component name of an event type's body in the OpenAPI document. */
export const eventComponentName = (type: WebhookEventType) => `${type}Event`

function bodySchema(type: WebhookEventType, event: TSchema, description: string) {
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ format: 'date-time', description: 'The event’s time.' }),
      data: Type.Object(
        { tenantId: Type.String(), event },
        { additionalProperties: false, description: 'The tenant, and the event.' },
      ),
    },
    { $id: eventComponentName(type), additionalProperties: false, description },
  )
}

const descriptionOf = (schema: TSchema) => (schema as { description?: string }).description ?? ''

/** Each event type's body schema, in the audit actions' order and WebhookTest last. */
export const WEBHOOK_EVENT_SCHEMAS: ReadonlyMap<WebhookEventType, TSchema> = new Map<
  WebhookEventType,
  TSchema
>([
  ...AUDIT_ACTIONS.map(
    (action) =>
      [
        action,
        bodySchema(action, auditEventSchema(action), descriptionOf(AUDIT_EVENTS[action])),
      ] as const,
  ),
  [
    WEBHOOK_TEST,
    bodySchema(
      WEBHOOK_TEST,
      WebhookTestEventFields,
      'Sent by `POST webhooks/{id}/test` to that endpoint only; not an audit event.',
    ),
  ],
])
