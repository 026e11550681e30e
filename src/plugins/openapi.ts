// The OpenAPI 3.1 document (GET /v1/openapi.json, the UI at /docs), fit to generate
// clients from (README, "The OpenAPI document"):
//   - every operation has an `operationId` (declared by its route) and a `security`
//     list, derived here from the route's `config.auth` so that it cannot drift from
//     what src/plugins/auth.ts accepts (`[]` for public routes);
//   - response shapes are components (src/schemas.ts, `ref()`), registered here with
//     `app.addSchema`: Fastify's serializer resolves their `$ref`s against the same
//     schemas, so the document and the response allowlist are one schema each;
//   - every error response lists the `details.reason` values it may carry, in its
//     description and as `x-reasons`: those the route declares, and those every route
//     of its kind shares (derived here from its body, parameters, tenant prefix, auth
//     mode and budget);
//   - request schemas say what the service accepts (README, "The OpenAPI document"): an
//     unknown property is ignored, so no object says `additionalProperties: false` (the
//     route's own schema keeps it: validation drops what it does not name; the §8 rule
//     still reads its strings, which info.description says), and every
//     string carries CONTRACT §8's rule as a pattern, an email the service's own rule in
//     place of `format: email` (`publishedRequest`);
//   - `webhooks` (OpenAPI 3.1) lists every event a webhook endpoint is sent, each with its
//     body as a component `{Type}Event`, built from the typed map of audit events
//     (modules/audit/events.ts, through modules/webhooks/events.ts), so the document
//     names each action's metadata as the append writes it.

import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import type { TSchema } from 'typebox'
import type { Config } from '../config.ts'
import { EMAIL_PATTERN } from '../lib/email.ts'
import type { ErrorStatus, Reason } from '../lib/errors.ts'
import { apiKeyComponents } from '../modules/apikeys/schemas.ts'
import { apiResourceComponents } from '../modules/apiresources/schemas.ts'
import { applicationComponents } from '../modules/applications/schemas.ts'
import { auditComponents } from '../modules/audit/schemas.ts'
import { connectedApplicationComponents } from '../modules/connectedapps/schemas.ts'
import { oauthComponents } from '../modules/federation/idp/schemas.ts'
import { ssoConnectionComponents } from '../modules/federation/schemas.ts'
import { socialConnectionComponents } from '../modules/federation/social/schemas.ts'
import { groupComponents } from '../modules/groups/schemas.ts'
import { hookComponents } from '../modules/hooks/schemas.ts'
import { importComponents } from '../modules/import/schemas.ts'
import { introspectionComponents } from '../modules/introspection/schemas.ts'
import { inviteComponents } from '../modules/invites/schemas.ts'
import { mfaComponents } from '../modules/mfa/schemas.ts'
import { organizationComponents } from '../modules/organizations/schemas.ts'
import { passkeyComponents } from '../modules/passkeys/schemas.ts'
import { passwordlessComponents } from '../modules/passwordless/schemas.ts'
import { privacyComponents } from '../modules/privacy/schemas.ts'
import { roleComponents } from '../modules/roles/schemas.ts'
import { serviceComponents } from '../modules/service/schemas.ts'
import { sessionComponents } from '../modules/sessions/schemas.ts'
import { templateComponents } from '../modules/templates/schemas.ts'
import { SLUG_PATTERN, tenantComponents } from '../modules/tenants/schemas.ts'
import { userComponents } from '../modules/users/schemas.ts'
import {
  eventComponentName,
  WEBHOOK_EVENT_SCHEMAS,
  type WebhookEventType,
} from '../modules/webhooks/events.ts'
import { webhookComponents } from '../modules/webhooks/schemas.ts'
import {
  type ErrorReasons,
  errorResponses,
  REASONS_KEY,
  SAFE_TEXT_PATTERN,
  sharedComponents,
} from '../schemas.ts'
import type { AuthMode } from './auth.ts'

/** Every named shape: components.schemas of the document. */
const COMPONENTS = [
  ...sharedComponents,
  ...serviceComponents,
  ...tenantComponents,
  ...sessionComponents,
  ...userComponents,
  ...importComponents,
  ...passwordlessComponents,
  ...mfaComponents,
  ...passkeyComponents,
  ...oauthComponents,
  ...apiKeyComponents,
  ...inviteComponents,
  ...auditComponents,
  ...roleComponents,
  ...groupComponents,
  ...organizationComponents,
  ...introspectionComponents,
  ...privacyComponents,
  ...applicationComponents,
  ...apiResourceComponents,
  ...connectedApplicationComponents,
  ...webhookComponents,
  ...hookComponents,
  ...templateComponents,
  ...ssoConnectionComponents,
  ...socialConnectionComponents,
]

type SecurityRequirement = { readonly [scheme: string]: readonly string[] }

const SECURITY_SCHEMES = {
  userToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A user access token from a sign-in (auth/login, auth/refresh, …), valid 900 seconds, for its own tenant only.',
  },
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'ak_live_… or ak_test_…',
    description:
      "An API key of the tenant (api-keys), acting as the tenant's admin on the routes that accept one (CONTRACT §4).",
  },
  tenantCreationToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'TENANT_CREATION_TOKEN, when the service is configured with one.',
  },
} as const

/** GET /metrics exists only with METRICS_TOKEN (src/plugins/metrics.ts), and so does this. */
const METRICS_SCHEME = {
  metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN.' },
} as const

/** Who may call a route, by its `config.auth` (src/plugins/auth.ts; CONTRACT §4). */
const SECURITY_BY_AUTH: Record<AuthMode, SecurityRequirement[]> = {
  user: [{ userToken: [] }],
  signedIn: [{ userToken: [] }, { apiKey: [] }],
  admin: [{ userToken: [] }, { apiKey: [] }],
  adminUser: [{ userToken: [] }],
  apiKey: [{ apiKey: [] }],
  // OpenAPI 3.1 §4.8.30: an empty requirement makes the token optional.
  optionalUser: [{ userToken: [] }, {}],
}

const TOKEN_REFUSALS: Reason[] = [
  'token_missing',
  'token_invalid',
  'token_expired',
  'session_revoked',
]

/** What src/plugins/auth.ts answers, by mode; admin routes also take a point of a budget. */
const AUTH_REASONS: Record<AuthMode, ErrorReasons> = {
  user: { 401: [...TOKEN_REFUSALS, 'user_token_required'] },
  // An API key takes a point of the admin budget on these too (src/plugins/auth.ts).
  signedIn: { 401: [...TOKEN_REFUSALS, 'invalid_api_key'], 429: ['rate_limited'] },
  admin: {
    401: [...TOKEN_REFUSALS, 'invalid_api_key'],
    403: ['admin_required', 'permission_required'],
    429: ['rate_limited'],
  },
  adminUser: {
    401: [...TOKEN_REFUSALS, 'invalid_api_key'],
    403: ['admin_required', 'permission_required', 'api_key_not_allowed'],
    429: ['rate_limited'],
  },
  apiKey: { 401: ['token_missing', 'token_invalid', 'invalid_api_key'], 429: ['rate_limited'] },
  optionalUser: {
    401: [...TOKEN_REFUSALS.filter((r) => r !== 'token_missing'), 'user_token_required'],
  },
}

/** Validation, and Fastify's refusals of a body it cannot read (src/plugins/errors.ts). */
const BODY_REASONS: Reason[] = [
  'validation',
  'malformed_json',
  'unsupported_media_type',
  'body_too_large',
]

const TAGS = [
  { name: 'Service', description: 'Liveness, readiness and this description.' },
  { name: 'Tenants', description: 'Creating a tenant, and its public logo.' },
  { name: 'Authentication', description: 'Sign-up, sign-in, sessions and sign-out.' },
  { name: 'Current user', description: 'The signed-in user: its record, password, account.' },
  { name: 'MFA', description: 'TOTP enrolment and emailed second-factor codes.' },
  { name: 'Passkeys', description: 'WebAuthn passkeys: registering, listing, signing in.' },
  {
    name: 'Identity-provider OAuth',
    description: "Hosted sign-in through the tenant's identity provider.",
  },
  { name: 'Administration', description: 'The tenant, its users, API keys and audit log.' },
  { name: 'Invites', description: 'Invitations, and accepting one.' },
  { name: 'Roles', description: 'The tenant permissions, and the roles that hold them.' },
  {
    name: 'Organizations',
    description:
      'Organizations inside the tenant: members with organization roles, invitations, organization tokens.',
  },
  { name: 'Tokens', description: 'How other back ends check access tokens.' },
  {
    name: 'OpenID provider',
    description:
      'The applications and API resources of the tenant’s OpenID Provider (issuer `{PUBLIC_URL}/oidc/{tenantSlug}`).',
  },
  {
    name: 'Webhooks',
    description: 'Audit events sent to the tenant’s endpoints, signed per Standard Webhooks.',
  },
  {
    name: 'SSO connections',
    description:
      'Enterprise single sign-on: the tenant’s OIDC and SAML 2.0 identity providers, each owning email domains.',
  },
  {
    name: 'Social connections',
    description:
      'Social sign-in: the providers (Google, GitHub, GitLab, …, or any OpenID Connect or OAuth 2.0 one) the tenant’s users sign in with, as buttons on the hosted sign-in page.',
  },
  {
    name: 'Identities',
    description: 'The outside identities linked to the signed-in user’s account.',
  },
]

export async function installOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  for (const component of COMPONENTS) app.addSchema(component)
  app.addHook('onRoute', impliedResponses)
  /** Per operationId, the reasons of each error status (`x-reasons`). */
  const reasons = new Map<string, Record<string, Reason[]>>()

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tenant authentication service',
        description:
          'Multi-tenant authentication and user management. Errors share one envelope: `{ code, message, details? }`; each error response lists the `details.reason` values it may carry (`x-reasons`). Request bodies: a property an operation does not name is ignored (never applied), but, like every string a request carries, its strings and keys may hold no U+0000 and no unpaired surrogate (400 `validation`); a body nests at most 32 levels deep (else 400 `validation`), and a `__proto__` key, or a `constructor` key holding `prototype`, is refused as 400 `malformed_json`.',
        version: '0.0.0',
      },
      servers: [{ url: config.publicUrl }],
      tags: TAGS,
      webhooks: webhooksSection(),
      components: {
        securitySchemes: config.metricsToken
          ? { ...SECURITY_SCHEMES, ...METRICS_SCHEME }
          : SECURITY_SCHEMES,
      },
    },
    // A component is named by its $id (the default would be def-0, def-1, …).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    transform: ({ schema, url, route }) => ({ schema: describe(route, schema, reasons), url }),
    transformObject: (document) => {
      const openapiObject = 'openapiObject' in document ? document.openapiObject : {}
      const schemas = openapiObject.components?.schemas
      if (schemas) Object.assign(schemas, webhookEventComponents())
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const operation of Object.values(item ?? {}) as Operation[]) {
          const listed = operation?.operationId && reasons.get(operation.operationId)
          if (!listed) continue
          for (const [status, list] of Object.entries(listed)) {
            const response = operation.responses?.[status]
            if (response) response[REASONS_KEY] = list
          }
        }
      }
      return openapiObject
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
}

/** The Standard Webhooks headers every delivery carries (CONTRACT §13). */
const WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    description: 'The delivery’s id, the same on every retry: deduplicate on it.',
  },
  { name: 'webhook-timestamp', description: 'When this attempt was signed, in Unix seconds.' },
  {
    name: 'webhook-signature',
    description:
      '`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed with the secret’s base64-decoded bytes; two, space-separated, for 24 hours after a secret rotation.',
  },
].map((header) => ({
  ...header,
  in: 'header',
  required: true,
  schema: { type: 'string' as const },
}))

/**
 * The document's `webhooks` (OpenAPI 3.1 §4.8.1): per event type, the POST a subscribed
 * endpoint receives, its body the `{Type}Event` component (`webhookEventComponents`).
 */
function webhooksSection() {
  const section: Record<string, { post: ReturnType<typeof webhookOperation> }> = {}
  for (const [type, schema] of WEBHOOK_EVENT_SCHEMAS)
    section[type] = { post: webhookOperation(type, schema) }
  return section
}

function webhookOperation(type: WebhookEventType, schema: TSchema) {
  // No operationId: the service calls these, no client does (the SDK's operations are
  // those it can call, sdk/src/operations.ts).
  return {
    summary: `${type} event`,
    description: (schema as { description?: string }).description,
    tags: ['Webhooks'],
    security: [],
    parameters: WEBHOOK_HEADERS,
    requestBody: {
      required: true,
      content: { 'application/json': { schema: { $ref: eventComponentRef(type) } } },
    },
    responses: {
      '2XX': { description: 'Received: a 2xx within 10 s ends the delivery.' },
      default: {
        description:
          'Anything else, or no answer within 10 s, is retried on the schedule (a `Retry-After` may postpone it); redirects are not followed.',
      },
    },
  }
}

const eventComponentRef = (type: WebhookEventType) =>
  `#/components/schemas/${eventComponentName(type)}`

/** The `{Type}Event` components: each body schema, as JSON, without its `$id`. */
function webhookEventComponents(): Record<string, unknown> {
  const components: Record<string, unknown> = {}
  for (const [type, schema] of WEBHOOK_EVENT_SCHEMAS) {
    const { $id: _id, ...json } = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
    components[eventComponentName(type)] = json
  }
  return components
}

/**
 * The error statuses a route's config implies, added to its response schema (the
 * serializer's allowlist and the document alike) where the route does not declare them:
 * `config.auth` refuses a token with 401 and, where it lets an admin (or API key) in,
 * refuses another role with 403 and charges a budget (429); `config.rateLimit` is a
 * budget too. Each with only the reasons `sharedReasons` derives.
 */
function impliedResponses(route: RouteOptions): void {
  const response = route.schema?.response as Record<string, unknown> | undefined
  if (!response) return
  const auth = route.config?.auth
  const implied = new Set<ErrorStatus>()
  if (auth)
    for (const status of Object.keys(AUTH_REASONS[auth])) implied.add(Number(status) as ErrorStatus)
  if (route.config?.rateLimit) implied.add(429)
  if (route.config?.refusedToImpersonation) implied.add(403)
  const missing = [...implied].filter((status) => !(status in response))
  if (missing.length === 0) return
  const added = errorResponses(Object.fromEntries(missing.map((status) => [status, []])))
  route.schema = { ...route.schema, response: { ...response, ...added } }
}

interface Operation {
  operationId?: string
  responses?: Record<string, Record<string, unknown>>
}

const RETRY_AFTER = {
  'Retry-After': { type: 'integer', description: 'Seconds until the budget has a point again.' },
}

type ErrorEntry = { $ref: string; description: string; [REASONS_KEY]: Reason[] }

/** The route's schema as the document shows it: its security, and its errors' reasons. */
function describe(
  route: RouteOptions,
  schema: FastifySchema,
  reasons: Map<string, Record<string, Reason[]>>,
): FastifySchema {
  if (!schema) return schema
  const auth = route.config?.auth
  const security = auth ? SECURITY_BY_AUTH[auth] : (schema.security ?? [])
  const shared = sharedReasons(route, schema)
  const response: Record<string, unknown> = { ...(schema.response as object) }
  const listed: Record<string, Reason[]> = {}
  for (const [status, entry] of Object.entries(response)) {
    if (!isErrorEntry(entry)) continue
    const all = [
      ...new Set([...(shared[Number(status) as ErrorStatus] ?? []), ...entry[REASONS_KEY]]),
    ]
    listed[status] = all
    const list = all.map((reason) => `\`${reason}\``).join(', ')
    response[status] = {
      ...entry,
      ...(status === '429' ? { headers: RETRY_AFTER } : {}),
      description:
        all.length > 0 ? `${entry.description}. \`details.reason\`: ${list}.` : entry.description,
    }
  }
  if (schema.operationId) reasons.set(schema.operationId, listed)
  const querystring = schema.querystring && optionalDefaults(schema.querystring as ObjectSchema)
  const request: Record<string, unknown> = {}
  if (schema.body) request.body = publishedRequest(schema.body)
  if (querystring) request.querystring = publishedRequest(querystring)
  if (schema.params) request.params = publishedRequest(schema.params)
  const permission = route.config?.permission
  const guard = permission ? { 'x-permission': permission } : {}
  return { ...schema, security, response, ...request, ...guard } as FastifySchema
}

type JsonSchema = Record<string, unknown>

/**
 * A request schema as the document shows it, what the service accepts (a copy: the
 * route's schema still validates): every object allows the properties it does not name
 * (they are ignored) instead of `additionalProperties: false`, which validation reads as
 * "drop", and its keys carry SAFE_TEXT_PATTERN (`propertyNames`). An `additionalProperties`
 * schema for the unknown ones' values would say the rest of §8, but client generators turn
 * it into an index signature that no typed body satisfies: info.description says it; an email carries EMAIL_PATTERN, the rule of isEmail (Ajv's `email` format here),
 * instead of `format: email`; every other free string carries SAFE_TEXT_PATTERN, the rule src/plugins/hygiene.ts
 * enforces on all of them (a string with its own pattern, format or values is narrower
 * already: test/openapi.test.ts holds each to refusing U+0000 and lone surrogates); the
 * tenant slug carries its own rule (a slug that breaks it is 404 tenant_not_found).
 */
function publishedRequest(schema: unknown, name = ''): unknown {
  if (Array.isArray(schema)) return schema.map((item) => publishedRequest(item))
  if (schema === null || typeof schema !== 'object') return schema
  const node = schema as JsonSchema
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([prop, s]) => [prop, publishedRequest(s, prop)]),
      )
    } else if (key === 'not' || key === 'examples' || key === 'default') {
      out[key] = value // `not` names properties to refuse; adding rules inside would invert them
    } else if (typeof value === 'object' && value !== null) {
      out[key] = publishedRequest(value)
    } else out[key] = value
  }
  if (node.type === 'object') {
    if (node.additionalProperties === false) delete out.additionalProperties
    out.propertyNames = { pattern: SAFE_TEXT_PATTERN }
  }
  if (node.format === 'email') {
    delete out.format
    out.pattern = EMAIL_PATTERN
  } else if (node.type === 'string' && name === 'tenantSlug') {
    Object.assign(out, { pattern: SLUG_PATTERN, maxLength: 63 })
  } else if (
    node.type === 'string' &&
    !('pattern' in node || 'format' in node || 'const' in node || 'enum' in node)
  ) {
    out.pattern = SAFE_TEXT_PATTERN
  }
  return out
}

type ObjectSchema = { properties?: Record<string, { default?: unknown }>; required?: string[] }

/**
 * A query parameter with a default need not be sent (validation fills it in), so the
 * document does not mark it required, whatever its TypeBox type says.
 */
function optionalDefaults(querystring: ObjectSchema): ObjectSchema {
  const required = querystring.required?.filter(
    (name) => querystring.properties?.[name]?.default === undefined,
  )
  return { ...querystring, required }
}

/** The reasons every route of this kind may answer with, by status. */
function sharedReasons(route: RouteOptions, schema: FastifySchema): ErrorReasons {
  const out: Partial<Record<ErrorStatus, Reason[]>> = {}
  const add = (more: ErrorReasons) => {
    for (const [status, list] of Object.entries(more)) {
      const key = Number(status) as ErrorStatus
      out[key] = [...(out[key] ?? []), ...(list ?? [])]
    }
  }
  // Any route's path, query string or User-Agent may fail validation (src/plugins/hygiene.ts),
  // and Fastify reads a body sent to any method but GET, whether or not the route has one.
  add({ 400: schema.body || route.method !== 'GET' ? BODY_REASONS : ['validation'] })
  if (route.url.startsWith('/v1/:tenantSlug/')) add({ 404: ['tenant_not_found'] })
  const auth = route.config?.auth
  if (auth) add(AUTH_REASONS[auth])
  if (route.config?.rateLimit) add({ 429: ['rate_limited'] })
  // CONTRACT §22: an impersonated session's token is refused here (src/plugins/auth.ts).
  if (route.config?.refusedToImpersonation) add({ 403: ['impersonation_forbidden'] })
  return out
}

function isErrorEntry(entry: unknown): entry is ErrorEntry {
  return (
    typeof entry === 'object' &&
    entry !== null &&
    (entry as { $ref?: unknown }).$ref === 'Error' &&
    Array.isArray((entry as Record<string, unknown>)[REASONS_KEY])
  )
}
