// Shapes of the api-keys routes (SPEC, Administration; CONTRACT §2, API key record).
import { type Static, Type } from 'typebox'
import { DateTime, NullableDateTime, PageParams, TenantSlugParams } from '../../schemas.ts'

export const Environment = Type.Union([Type.Literal('live'), Type.Literal('test')])

/** The record as every response shows it: never the secret or its hash. */
export const ApiKeyRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  environment: Environment,
  prefix: Type.String({ description: 'The first 12 characters of the key, to tell keys apart.' }),
  createdAt: DateTime,
  expiresAt: NullableDateTime,
  lastUsedAt: NullableDateTime,
  revokedAt: NullableDateTime,
})
export type ApiKeyRecord = Static<typeof ApiKeyRecord>

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    environment: Environment,
    expiresAt: Type.Optional(DateTime),
  },
  { additionalProperties: false },
)
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>

export const CreatedApiKey = Type.Object({
  plaintext: Type.String({ description: 'The key itself: shown this once, never again.' }),
  apiKey: ApiKeyRecord,
})

export const ListApiKeysQuery = Type.Object(
  { includeRevoked: Type.Boolean({ default: false }), ...PageParams },
  { additionalProperties: false },
)
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>

// The spec types the id as a string: a malformed one is an unknown key (404).
export const ApiKeyParams = Type.Object({
  ...TenantSlugParams.properties,
  id: Type.String({ minLength: 1 }),
})
