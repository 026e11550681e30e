// Schemas shared by several modules. One TypeBox schema gives validation, serialization
// (the response schema is an allowlist: a hash or secret can never leak by accident) and
// the OpenAPI document.
//
// Response shapes are *components*: a schema with an `$id`, registered once with
// `app.addSchema` (src/plugins/openapi.ts) and used everywhere through `ref()`, so the
// document names it under components.schemas and refers to it with `$ref`. Fastify's
// serializer resolves the same `$ref` against the registered schema: the allowlist is the
// component itself. Request shapes (bodies, query strings, path parameters) stay inline:
// validation compiles them without the registered schemas.
import { type Static, type TSchema, Type } from 'typebox'
import { EMAIL_MAX_LENGTH } from './lib/email.ts'
import { CODE_BY_STATUS, type ErrorStatus, type Reason } from './lib/errors.ts'
import { Role, UserComponent, UserStatus } from './modules/users/record.ts'

export { Role, UserComponent, UserStatus }

/**
 * A reference to a component: `{ $ref: '<its $id>' }`, with the component's static type,
 * so a handler's return value is still checked against the shape it refers to.
 */
export function ref<T extends TSchema>(component: T, options: { description?: string } = {}) {
  const id = (component as { $id?: unknown }).$id
  if (typeof id !== 'string') throw new Error('ref(): the schema has no $id')
  return Type.Unsafe<Static<T>>(Type.Ref(id, options))
}

/**
 * An email address as the service accepts it: Ajv's `email` format is src/lib/email.ts's
 * isEmail (src/plugins/validation.ts). The document shows the rule itself, EMAIL_PATTERN,
 * in place of the format (src/plugins/openapi.ts): `format: email` would say RFC 5321's
 * grammar, which is another rule.
 */
export const Email = Type.String({
  format: 'email',
  maxLength: EMAIL_MAX_LENGTH,
  description:
    'An email address: one `@`, a domain with a dot inside, at most 64 characters before the `@` and 254 in all; no white space inside (spaces around it are trimmed), no control or format character (Unicode Cc, Cf), no U+0000 or unpaired surrogate. Compared case-insensitively in Unicode NFC.',
})

/**
 * CONTRACT §8 as a pattern: no U+0000 and no unpaired UTF-16 surrogate. The document puts
 * it on every string a request carries (src/plugins/openapi.ts); the service enforces it
 * with src/plugins/hygiene.ts. The second branch (a pair) lets tools that read patterns
 * without Unicode mode see the same set; in Unicode mode a pair is one code point.
 */
export const SAFE_TEXT_PATTERN =
  '^(?:[^\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$'
/** Passwords presented to sign in (Limits: 1 to 1024). */
export const Password = Type.String({ minLength: 1, maxLength: 1024 })
/** Passwords being created or changed (Limits: 12 to 1024). */
export const NewPassword = Type.String({ minLength: 12, maxLength: 1024 })
export const SixDigits = Type.String({ pattern: '^[0-9]{6}$', minLength: 6, maxLength: 6 })
export const OpaqueToken = Type.String({ minLength: 1, maxLength: 1024 })
/**
 * CONTRACT §21, remembered devices: the fields a sign-in that may ask a second factor takes
 * (auth/login, auth/verify-login-code), spread into its body.
 */
export const RememberDeviceFields = {
  rememberDevice: Type.Optional(
    Type.Boolean({
      description:
        'With a second factor, where the tenant remembers devices: the answer carries a `deviceToken`.',
    }),
  ),
  deviceToken: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'A `deviceToken` this user was given: while it lives, the second factor is not asked. Another user’s, an expired or a forgotten one is ignored.',
    }),
  ),
}
/**
 * An MFA recovery code as typed (CONTRACT §9): `xxxxx-xxxxx`, any case, the hyphen and
 * spaces optional; anything else of this length is a wrong code (401 invalid_mfa_code).
 */
export const RecoveryCode = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'An MFA recovery code `xxxxx-xxxxx` (any case; hyphen and spaces optional).',
})
/**
 * Body option: a recoveryCode stands in for a totpCode; giving both is 400 (CONTRACT §9),
 * reported at body.recoveryCode (plugins/errors.ts words the `not` rule).
 */
export const NotBothTotpAndRecoveryCode = {
  // The properties are named inside `not` too, so the document's linter sees them defined.
  not: { properties: { totpCode: {}, recoveryCode: {} }, required: ['totpCode', 'recoveryCode'] },
}
export const Uuid = Type.String({ format: 'uuid' })
export const DateTime = Type.String({ format: 'date-time' })
export const NullableDateTime = Type.Union([DateTime, Type.Null()])

export const TenantSlugParams = Type.Object({
  tenantSlug: Type.String({ minLength: 1, maxLength: 200 }),
})

/** `{ ok: true }`: the answer of a change that has nothing else to say. */
const OkComponent = Type.Object({ ok: Type.Literal(true) }, { $id: 'Ok', description: 'Done.' })
export const Ok = ref(OkComponent)

/** Paging of every list (CONTRACT §2, Lists): `limit` 1..200 (default 50), opaque `cursor`. */
export const PageParams = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'nextCursor of the page before.' }),
  ),
}

/** The query string of a list that takes paging only (unknown parameters are refused). */
export const PageQuery = Type.Object({ ...PageParams }, { additionalProperties: false })
export type PageQuery = Static<typeof PageQuery>

/** The path of one resource of a tenant; a malformed id names none: 404, as an unknown one. */
export const ResourceParams = Type.Object({
  ...TenantSlugParams.properties,
  id: Type.String({ minLength: 1, maxLength: 100 }),
})

/** A list page component `{ items, nextCursor }`; nextCursor is null on the last page. */
export function Page<T extends TSchema>(id: string, item: T, description: string) {
  return Type.Object(
    {
      items: Type.Array(item),
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass it as `cursor` for the next page; null on the last page.',
      }),
    },
    { $id: id, description },
  )
}

export const Plan = Type.Union([
  Type.Literal('Free'),
  Type.Literal('Starter'),
  Type.Literal('Growth'),
  Type.Literal('Enterprise'),
])
export const MfaPolicy = Type.Union([
  Type.Literal('Disabled'),
  Type.Literal('Optional'),
  Type.Literal('Required'),
])
export const AuthPolicy = Type.Union([
  Type.Literal('PasswordOnly'),
  Type.Literal('PasswordAndPasswordless'),
  Type.Literal('PasswordlessOnly'),
])

/** The user record (CONTRACT §2, §14), defined with its row mapping in users/record.ts. */
export const PublicUser = ref(UserComponent)

/** The token envelope; `*ExpiresIn` are seconds (CONTRACT §2). */
export const TokenEnvelopeComponent = Type.Object(
  {
    user: PublicUser,
    accessToken: Type.String({ description: 'A JWT, sent as `Authorization: Bearer <it>`.' }),
    refreshToken: Type.String({ description: 'Opaque; single use (auth/refresh).' }),
    accessTokenExpiresIn: Type.Integer({ description: 'Seconds (900).' }),
    refreshTokenExpiresIn: Type.Integer({ description: 'Seconds (2592000).' }),
    deviceToken: Type.Optional(
      Type.String({
        description:
          'CONTRACT §21: given when the sign-in sent `rememberDevice: true`, proved a second factor and the tenant remembers devices (mfaRememberDays > 0); send it back as `deviceToken` at login to skip the second factor for that many days.',
      }),
    ),
  },
  { $id: 'TokenEnvelope', description: 'A new session: the user and its token pair.' },
)
export const TokenEnvelope = ref(TokenEnvelopeComponent)

const TokenEnvelopeWithSlugComponent = Type.Object(
  { ...TokenEnvelopeComponent.properties, tenantSlug: Type.String() },
  {
    $id: 'TokenEnvelopeWithSlug',
    description: 'A new session, with the slug of its tenant (tenant creation, invitations).',
  },
)
export const TokenEnvelopeWithSlug = ref(TokenEnvelopeWithSlugComponent)

/** The error envelope of CONTRACT §3. */
const ErrorComponent = Type.Object(
  {
    code: Type.Union(Object.values(CODE_BY_STATUS).map((c) => Type.Literal(c))),
    message: Type.String(),
    details: Type.Optional(
      Type.Object(
        {
          reason: Type.Optional(
            Type.String({ description: 'Why, from a fixed list (x-reasons of the response).' }),
          ),
          methods: Type.Optional(Type.Array(Type.String())),
          issues: Type.Optional(
            Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
          ),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { $id: 'Error', description: 'Every error: `{ code, message, details }` (CONTRACT §3).' },
)
export const ErrorEnvelope = ref(ErrorComponent)

/** The components of this file, registered by src/plugins/openapi.ts. */
export const sharedComponents = [
  OkComponent,
  UserComponent,
  TokenEnvelopeComponent,
  TokenEnvelopeWithSlugComponent,
  ErrorComponent,
]

const ERROR_TITLES: Record<ErrorStatus, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed (see Allow)',
  408: 'Request timeout',
  409: 'Conflict',
  429: 'Too many requests (see Retry-After)',
  431: 'Headers too large',
  500: 'Internal error',
  503: 'Unavailable',
}

/**
 * Where an error response keeps the `details.reason` values its route answers with; the
 * OpenAPI plugin adds those every such route shares and lists them (`x-reasons`).
 */
export const REASONS_KEY = 'x-reasons'

/**
 * Per error status, the reasons this route answers with besides those the OpenAPI plugin
 * derives from the route itself (a body or parameters: validation; the tenant prefix:
 * tenant_not_found; `config.auth`: the token and role refusals; a budget: rate_limited).
 * An empty list declares the status with only those.
 */
export type ErrorReasons = Partial<Record<ErrorStatus, readonly Reason[]>>

/** Response schemas for a 200 body and the error statuses a route may answer. */
export function responses(ok: TSchema, errors: ErrorReasons): Record<number, TSchema>
/** The statuses alone: each with only the reasons the OpenAPI plugin derives. */
export function responses(ok: TSchema, ...statuses: ErrorStatus[]): Record<number, TSchema>
export function responses(
  ok: TSchema,
  ...rest: [ErrorReasons] | ErrorStatus[]
): Record<number, TSchema> {
  const errors: ErrorReasons =
    typeof rest[0] === 'object'
      ? rest[0]
      : Object.fromEntries((rest as ErrorStatus[]).map((status) => [status, []]))
  return { 200: ok, ...errorResponses(errors) }
}

/** The error statuses alone, for a route whose 200 is not one JSON schema. */
export function errorResponses(errors: ErrorReasons): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const [status, reasons] of Object.entries(errors)) {
    out[Number(status)] = {
      ...ErrorEnvelope,
      description: ERROR_TITLES[Number(status) as ErrorStatus],
      [REASONS_KEY]: [...(reasons ?? [])],
    } as TSchema
  }
  return out
}
