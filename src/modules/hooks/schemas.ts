// Shapes of the hooks routes (CONTRACT §21).
import { type Static, Type } from 'typebox'
import { DateTime, Page, ref } from '../../schemas.ts'

export const HOOK_EVENTS = ['before_sign_up', 'before_sign_in', 'custom_access_token'] as const
export type HookEvent = (typeof HOOK_EVENTS)[number]

/** What a call came to, in the metrics, the calls log and a test call's answer. */
export const HOOK_OUTCOMES = ['allow', 'deny', 'timeout', 'error'] as const
export type HookOutcome = (typeof HOOK_OUTCOMES)[number]

/** How many of a hook's calls are kept (and listed): the newest. */
export const HOOK_CALLS_KEPT = 20

const Event = Type.Union(
  [
    Type.Literal('before_sign_up'),
    Type.Literal('before_sign_in'),
    Type.Literal('custom_access_token'),
  ],
  {
    description:
      '`before_sign_up` and `before_sign_in` may deny; `custom_access_token` adds claims to access tokens.',
  },
)
const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'An absolute https URL without credentials or fragment (http too when WEBHOOK_ALLOW_PRIVATE=true), reached through the egress guard. Anything else is 400 validation.',
})
const TimeoutMs = Type.Integer({
  minimum: 100,
  maximum: 5000,
  description: 'How long the service waits for the answer, in milliseconds (default 2000).',
})
const OnFailure = Type.Union([Type.Literal('allow'), Type.Literal('deny')], {
  description:
    'What a timeout, a non-2xx or an unreadable answer means: default `allow` for custom_access_token (no claims added), `deny` otherwise.',
})

const HookComponent = Type.Object(
  {
    id: Type.String(),
    event: Event,
    url: Type.String(),
    enabled: Type.Boolean(),
    timeoutMs: Type.Integer(),
    onFailure: OnFailure,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Hook', description: 'A blocking hook of the tenant (never its secret).' },
)
export const HookRecord = ref(HookComponent)
export type HookRecord = Static<typeof HookRecord>

export const CreateHookBody = Type.Object(
  {
    event: Event,
    url: Url,
    enabled: Type.Optional(Type.Boolean({ default: true })),
    timeoutMs: Type.Optional(TimeoutMs),
    onFailure: Type.Optional(OnFailure),
  },
  {
    additionalProperties: false,
    examples: [{ event: 'before_sign_up', url: 'https://hooks.example.com/sign-up' }],
  },
)
export type CreateHookBody = Static<typeof CreateHookBody>

export const PatchHookBody = Type.Object(
  {
    url: Type.Optional(Url),
    enabled: Type.Optional(Type.Boolean()),
    timeoutMs: Type.Optional(TimeoutMs),
    onFailure: Type.Optional(OnFailure),
  },
  { additionalProperties: false, examples: [{ enabled: false }] },
)
export type PatchHookBody = Static<typeof PatchHookBody>

const HookCreatedComponent = Type.Object(
  {
    hook: HookRecord,
    secret: Type.String({
      description:
        'The signing secret, `whsec_` and base64 (Standard Webhooks): shown this once. Verify every call with it.',
    }),
  },
  { $id: 'HookCreated', description: 'The new hook and its secret (shown once).' },
)
export const HookCreated = ref(HookCreatedComponent)

const HookEnvelopeComponent = Type.Object(
  { hook: HookRecord },
  { $id: 'HookEnvelope', description: 'A hook.' },
)
export const HookEnvelope = ref(HookEnvelopeComponent)

const HookPageComponent = Page('HookPage', HookRecord, 'A page of hooks, oldest first.')
export const HookPage = ref(HookPageComponent)

const Outcome = Type.Union(
  [Type.Literal('allow'), Type.Literal('deny'), Type.Literal('timeout'), Type.Literal('error')],
  {
    description:
      '`allow` (allowed, or claims given), `deny`, `timeout` (no answer within timeoutMs), `error` (anything else: a non-2xx, an unreadable or ill-shaped answer, an address the egress guard refuses, claims over 4 KiB). A timeout or an error is settled by the hook’s onFailure.',
  },
)
const DurationMs = Type.Integer({
  minimum: 0,
  description: 'From the request to the answer (or the failure), in milliseconds.',
})
const Status = Type.Integer({
  description: 'The receiver’s HTTP status; absent when none came (a timeout, a refused address).',
})
const CallError = Type.String({
  description:
    'Why the call failed, in the service’s words: one of a few fixed phrases by the kind of failure (`no answer within 2000 ms`, `HTTP 500`, `could not connect to the receiver`, `the host name could not be resolved`, `the TLS handshake failed`, …: docs/webhooks-and-hooks.md). Never the receiver’s answer, nor the network library’s message: no address, port or certificate name.',
})

const HookTestResultComponent = Type.Object(
  {
    outcome: Outcome,
    durationMs: DurationMs,
    status: Type.Optional(Status),
    message: Type.Optional(
      Type.String({ description: 'A deny’s message, as a sign-in would show it (≤ 200).' }),
    ),
    claims: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'custom_access_token: the claims a token would gain, the reserved ones dropped.',
        },
      ),
    ),
    droppedClaims: Type.Optional(
      Type.Array(Type.String(), {
        description: 'custom_access_token: the reserved claims of the answer, dropped.',
      }),
    ),
    error: Type.Optional(CallError),
  },
  {
    $id: 'HookTestResult',
    description:
      'What a test call came to. Nothing was decided: no one signed in or up, no token was minted.',
  },
)
export const HookTestResult = ref(HookTestResultComponent)
export type HookTestResult = Static<typeof HookTestResult>

const HookCallComponent = Type.Object(
  {
    at: DateTime,
    outcome: Outcome,
    durationMs: DurationMs,
    status: Type.Optional(Status),
    test: Type.Boolean({ description: 'A test call (POST hooks/{id}/test), not a sign-in’s.' }),
    error: Type.Optional(CallError),
  },
  { $id: 'HookCall', description: 'One call of a hook: never its body, answer or user.' },
)
export type HookCall = Static<typeof HookCallComponent>

const HookCallListComponent = Type.Object(
  { items: Type.Array(ref(HookCallComponent)) },
  {
    $id: 'HookCallList',
    description: `A hook’s last calls, real and test, newest first (at most ${HOOK_CALLS_KEPT}).`,
  },
)
export const HookCallList = ref(HookCallListComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const hookComponents = [
  HookComponent,
  HookCreatedComponent,
  HookEnvelopeComponent,
  HookPageComponent,
  HookTestResultComponent,
  HookCallComponent,
  HookCallListComponent,
]
