// Shapes of the api-keys routes (SPEC, Administration; CONTRACT §2, API key record).
import { type Static, Type } from 'typebox'
import {
  DateTime,
  NullableDateTime,
  Page,
  PageParams,
  ref,
  TenantSlugParams,
} from '../../schemas.ts'
import { PermissionName } from '../roles/schemas.ts'

export const Environment = Type.Union([Type.Literal('live'), Type.Literal('test')])

/** The record as every response shows it: never the secret or its hash. */
const ApiKeyComponent = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    environment: Environment,
    prefix: Type.String({
      description: 'The first 12 characters of the key, to tell keys apart.',
    }),
    createdAt: DateTime,
    expiresAt: NullableDateTime,
    lastUsedAt: NullableDateTime,
    revokedAt: NullableDateTime,
    permissions: Type.Array(PermissionName, {
      description:
        'The tenant permissions the key holds, sorted (CONTRACT §17); a route needing another answers 403 permission_required.',
    }),
  },
  { $id: 'ApiKey', description: 'An API key of the tenant (never its secret).' },
)
export const ApiKeyRecord = ref(ApiKeyComponent)
export type ApiKeyRecord = Static<typeof ApiKeyRecord>

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    environment: Environment,
    expiresAt: Type.Optional(DateTime),
    permissions: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 100,
        description:
          'Tenant permissions of the catalogue, each held by the creator (else 403 permission_required; an unknown one 400 validation). Default: the creator’s own effective permissions (an Admin’s: every one).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'CI deploys',
        environment: 'live',
        expiresAt: '2030-01-01T00:00:00Z',
        permissions: ['users:read'],
      },
    ],
  },
)
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>

const CreatedApiKeyComponent = Type.Object(
  {
    plaintext: Type.String({ description: 'The key itself: shown this once, never again.' }),
    apiKey: ApiKeyRecord,
  },
  { $id: 'CreatedApiKey', description: 'A new API key, with its plaintext (this once).' },
)
export const CreatedApiKey = ref(CreatedApiKeyComponent)

const ApiKeyPageComponent = Page('ApiKeyPage', ApiKeyRecord, 'A page of API keys, newest first.')
export const ApiKeyPage = ref(ApiKeyPageComponent)

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

/** The components of this module, registered by src/plugins/openapi.ts. */
export const apiKeyComponents = [ApiKeyComponent, CreatedApiKeyComponent, ApiKeyPageComponent]
