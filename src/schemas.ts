// Schemas shared by several modules. One TypeBox schema gives validation, serialization
// (the response schema is an allowlist: a hash or secret can never leak by accident) and
// the OpenAPI document.
import { type TSchema, Type } from 'typebox'
import { CODE_BY_STATUS } from './lib/errors.ts'

export const Email = Type.String({ format: 'email', maxLength: 254 })
/** Passwords presented to sign in (Limits: 1 to 1024). */
export const Password = Type.String({ minLength: 1, maxLength: 1024 })
/** Passwords being created or changed (Limits: 12 to 1024). */
export const NewPassword = Type.String({ minLength: 12, maxLength: 1024 })
export const SixDigits = Type.String({ pattern: '^[0-9]{6}$', minLength: 6, maxLength: 6 })
export const OpaqueToken = Type.String({ minLength: 1, maxLength: 1024 })
export const Uuid = Type.String({ format: 'uuid' })
export const DateTime = Type.String({ format: 'date-time' })
export const NullableDateTime = Type.Union([DateTime, Type.Null()])

export const TenantSlugParams = Type.Object({
  tenantSlug: Type.String({ minLength: 1, maxLength: 200 }),
})

export const Ok = Type.Object({ ok: Type.Literal(true) })

/** Paging of every list (CONTRACT §2, Lists): `limit` 1..200 (default 50), opaque `cursor`. */
export const PageParams = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'nextCursor of the page before.' }),
  ),
}

/** `{ items, nextCursor }`; nextCursor is null on the last page. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  })
}

export const UserStatus = Type.Union([
  Type.Literal('Pending'),
  Type.Literal('Active'),
  Type.Literal('Suspended'),
])
export const Role = Type.Union([Type.Literal('Member'), Type.Literal('Admin')])
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

/** The user as every response shows it (CONTRACT §2). */
export const PublicUser = Type.Object({
  id: Type.String(),
  tenantId: Type.String(),
  email: Type.String(),
  status: UserStatus,
  role: Role,
  createdAt: DateTime,
  lastLoginAt: NullableDateTime,
  totpEnrolled: Type.Boolean(),
  emailVerified: Type.Boolean(),
})

/** The token envelope; `*ExpiresIn` are seconds (CONTRACT §2). */
export const TokenEnvelope = Type.Object({
  user: PublicUser,
  accessToken: Type.String(),
  refreshToken: Type.String(),
  accessTokenExpiresIn: Type.Integer(),
  refreshTokenExpiresIn: Type.Integer(),
})

export const TokenEnvelopeWithSlug = Type.Object({
  ...TokenEnvelope.properties,
  tenantSlug: Type.String(),
})

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  429: 'Too many requests (see Retry-After)',
  503: 'Unavailable',
}

/** The error envelope of CONTRACT §3. */
export const ErrorEnvelope = Type.Object(
  {
    code: Type.Union(Object.values(CODE_BY_STATUS).map((c) => Type.Literal(c))),
    message: Type.String(),
    details: Type.Optional(
      Type.Object(
        {
          reason: Type.Optional(Type.String()),
          methods: Type.Optional(Type.Array(Type.String())),
          issues: Type.Optional(
            Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
          ),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { description: 'Error' },
)

/** Response schemas for a 200 body and the error statuses a route may answer. */
export function responses(ok: TSchema, ...statuses: (keyof typeof ERROR_DESCRIPTIONS)[]) {
  const out: Record<number, TSchema> = { 200: ok }
  for (const status of statuses) {
    out[status] = { ...ErrorEnvelope, description: ERROR_DESCRIPTIONS[status] } as TSchema
  }
  return out
}
