// Shapes of GET audit (SPEC, Administration and Events; CONTRACT §2, Audit event).
import { type Static, Type } from 'typebox'
import { DateTime, Page, PageParams, ref, TenantSlugParams, Uuid } from '../../schemas.ts'
import { AUDIT_ACTIONS } from './actions.ts'

/** An audit event's fields as the list shows them (a webhook's `data.event` too: webhooks/events.ts). */
export const AUDIT_EVENT_PROPERTIES = {
  id: Type.String(),
  action: Type.String(),
  actorType: Type.Union([
    Type.Literal('user'),
    Type.Literal('apiKey'),
    Type.Literal('system'),
    Type.Literal('anonymous'),
  ]),
  actorId: Type.Union([Type.String(), Type.Null()]),
  userId: Type.Union([Type.String(), Type.Null()], {
    description: 'The user the event concerns.',
  }),
  ip: Type.Union([Type.String(), Type.Null()]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        "The action's own fields: each action's are in the webhooks section (`{Action}Event`, `data.event.metadata`).",
    },
  ),
  createdAt: DateTime,
  userEmail: Type.Optional(
    Type.String({
      description:
        "The address of the user the event concerns, present while that user exists (never a deleted user's).",
    }),
  ),
}

const AuditEventComponent = Type.Object(AUDIT_EVENT_PROPERTIES, {
  $id: 'AuditEvent',
  description: 'One event of the audit log.',
})
export const AuditEventRecord = ref(AuditEventComponent)

const AuditEventPageComponent = Page(
  'AuditEventPage',
  AuditEventRecord,
  'A page of the audit log, newest first.',
)
export const AuditEventPage = ref(AuditEventPageComponent)

export const AuditQuery = Type.Object(
  {
    // One `enum` rather than a union of literals: a wrong action is one validation issue.
    action: Type.Optional(
      Type.Enum([...AUDIT_ACTIONS], {
        description: 'The Events list, plus the Passwordless* actions and UserUpdated.',
      }),
    ),
    userId: Type.Optional(Uuid),
    before: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only events strictly older than this.' }),
    ),
    search: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Case-insensitive substring of the action, the email or the metadata.',
      }),
    ),
    ...PageParams,
  },
  { additionalProperties: false },
)
export type AuditQuery = Static<typeof AuditQuery>

const ExportAction = Type.Enum([...AUDIT_ACTIONS], {
  description: 'Only events of this action (as the audit list filter takes it).',
})

export const AuditExportQuery = Type.Object(
  {
    action: Type.Optional(ExportAction),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only events at or after this time.' }),
    ),
    until: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only events strictly before this time.' }),
    ),
  },
  { additionalProperties: false },
)
export type AuditExportQuery = Static<typeof AuditExportQuery>

/** One line per event, each the AuditEvent the list shows. */
export const AuditExportLines = Type.String({
  description: 'Newline-delimited JSON: one AuditEvent per line, oldest first.',
})

export const AuditParams = TenantSlugParams

/** The components of this module, registered by src/plugins/openapi.ts. */
export const auditComponents = [AuditEventComponent, AuditEventPageComponent]
