// Shapes of the webhooks routes (CONTRACT §13).
import { type Static, Type } from 'typebox'
import { DateTime, Page, ResourceParams, ref } from '../../schemas.ts'

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'An absolute https URL without credentials or fragment (http too when WEBHOOK_ALLOW_PRIVATE=true). Anything else is 400 validation.',
})
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 200,
  uniqueItems: true,
  description:
    'Audit action names, exact case (see the audit list), or `["*"]` alone for every event. Anything else is 400 validation.',
})
const Description = Type.String({ maxLength: 500 })

const WebhookComponent = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    failingSince: Type.Union([DateTime, Type.Null()], {
      description: 'When the current run of failed deliveries began; null when the last succeeded.',
    }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Webhook', description: 'A webhook endpoint of the tenant (never its secret).' },
)
export const WebhookRecord = ref(WebhookComponent)
export type WebhookRecord = Static<typeof WebhookRecord>

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  {
    additionalProperties: false,
    examples: [
      { url: 'https://hooks.example.com/auth', events: ['UserSignup', 'UserSoftDeleted'] },
    ],
  },
)
export type CreateWebhookBody = Static<typeof CreateWebhookBody>

export const PatchWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ enabled: false }] },
)
export type PatchWebhookBody = Static<typeof PatchWebhookBody>

const Secret = Type.String({
  description: 'The signing secret, `whsec_` and base64 (Standard Webhooks): shown this once.',
})

const WebhookCreatedComponent = Type.Object(
  { webhook: WebhookRecord, secret: Secret },
  { $id: 'WebhookCreated', description: 'The new webhook and its secret (shown once).' },
)
export const WebhookCreated = ref(WebhookCreatedComponent)

const WebhookEnvelopeComponent = Type.Object(
  { webhook: WebhookRecord },
  { $id: 'WebhookEnvelope', description: 'A webhook.' },
)
export const WebhookEnvelope = ref(WebhookEnvelopeComponent)

const WebhookSecretComponent = Type.Object(
  { secret: Secret },
  {
    $id: 'WebhookSecret',
    description:
      'A new signing secret. For 24 hours deliveries carry a signature with the old secret beside the new one.',
  },
)
export const WebhookSecret = ref(WebhookSecretComponent)

const WebhookPageComponent = Page('WebhookPage', WebhookRecord, 'A page of webhooks, oldest first.')
export const WebhookPage = ref(WebhookPageComponent)

export const DeliveryStatus = Type.Union([
  Type.Literal('Pending'),
  Type.Literal('Succeeded'),
  Type.Literal('Failed'),
])

const DeliveryComponent = Type.Object(
  {
    id: Type.String({ description: 'Also the `webhook-id` header of every attempt.' }),
    eventId: Type.String({ description: 'The audit event’s id (a test event’s own).' }),
    eventType: Type.String(),
    status: DeliveryStatus,
    attempts: Type.Integer(),
    lastResponseStatus: Type.Union([Type.Integer(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    nextAttemptAt: Type.Union([DateTime, Type.Null()]),
    createdAt: DateTime,
  },
  { $id: 'WebhookDelivery', description: 'One event sent (or to send) to one endpoint.' },
)
export const DeliveryRecord = ref(DeliveryComponent)
export type DeliveryRecord = Static<typeof DeliveryRecord>

const DeliveryEnvelopeComponent = Type.Object(
  { delivery: DeliveryRecord },
  { $id: 'WebhookDeliveryEnvelope', description: 'A delivery.' },
)
export const DeliveryEnvelope = ref(DeliveryEnvelopeComponent)

const DeliveryPageComponent = Page(
  'WebhookDeliveryPage',
  DeliveryRecord,
  'A page of a webhook’s deliveries, oldest first.',
)
export const DeliveryPage = ref(DeliveryPageComponent)

export const DeliveryParams = Type.Object({
  ...ResourceParams.properties,
  deliveryId: Type.String({ minLength: 1, maxLength: 100 }),
})

/** The components of this module, registered by src/plugins/openapi.ts. */
export const webhookComponents = [
  WebhookComponent,
  WebhookCreatedComponent,
  WebhookEnvelopeComponent,
  WebhookSecretComponent,
  WebhookPageComponent,
  DeliveryComponent,
  DeliveryEnvelopeComponent,
  DeliveryPageComponent,
]
