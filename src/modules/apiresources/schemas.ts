// Shapes of the api-resources routes (CONTRACT §11, API resources; §12, Shapes).
import { type Static, Type } from 'typebox'
import { DateTime, Page, ref } from '../../schemas.ts'
import { ScopeName } from '../applications/schemas.ts'

const ScopeRole = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'A role’s name: `Member`, `Admin` or a custom role of the tenant.',
})

const Scope = Type.Object(
  {
    name: ScopeName,
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    roles: Type.Optional(
      Type.Array(ScopeRole, {
        uniqueItems: true,
        maxItems: 100,
        description:
          'The roles whose holders are granted this scope in an authorization: `Member`, `Admin` or custom roles of the tenant (CONTRACT §17; an unknown one is 400 `validation`); default both built-ins.',
      }),
    ),
  },
  { additionalProperties: false },
)
const ScopeList = Type.Array(Scope, { maxItems: 100 })
const Ttl = Type.Integer({
  minimum: 60,
  maximum: 86400,
  description: 'Lifetime of the access tokens issued for this resource, in seconds.',
})
const Identifier = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'An absolute URI without a fragment (RFC 8707): `resource` and the tokens’ `aud`.',
})
const Name = Type.String({ minLength: 1, maxLength: 200 })

const ApiResourceComponent = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    identifier: Type.String(),
    scopes: Type.Array(
      Type.Object({
        name: Type.String(),
        description: Type.Union([Type.String(), Type.Null()]),
        roles: Type.Array(Type.String(), {
          description: 'The built-in and custom roles granted this scope, by name.',
        }),
      }),
    ),
    accessTokenTtlSeconds: Type.Integer(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'ApiResource', description: 'An API of the tenant that access tokens are issued for.' },
)
export const ApiResourceRecord = ref(ApiResourceComponent)
export type ApiResourceRecord = Static<typeof ApiResourceRecord>

export const CreateApiResourceBody = Type.Object(
  {
    name: Name,
    identifier: Identifier,
    scopes: ScopeList,
    accessTokenTtlSeconds: Type.Optional(Ttl),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Reports API',
        identifier: 'https://api.example.com/reports',
        scopes: [{ name: 'reports:read', description: 'Read reports' }],
      },
    ],
  },
)
export type CreateApiResourceBody = Static<typeof CreateApiResourceBody>

export const PatchApiResourceBody = Type.Object(
  {
    name: Type.Optional(Name),
    identifier: Type.Optional(Identifier),
    scopes: Type.Optional(ScopeList),
    accessTokenTtlSeconds: Type.Optional(Ttl),
  },
  { additionalProperties: false, examples: [{ accessTokenTtlSeconds: 3600 }] },
)
export type PatchApiResourceBody = Static<typeof PatchApiResourceBody>

const ApiResourceEnvelopeComponent = Type.Object(
  { apiResource: ApiResourceRecord },
  { $id: 'ApiResourceEnvelope', description: 'An API resource.' },
)
export const ApiResourceEnvelope = ref(ApiResourceEnvelopeComponent)

const ApiResourcePageComponent = Page(
  'ApiResourcePage',
  ApiResourceRecord,
  'A page of API resources, oldest first.',
)
export const ApiResourcePage = ref(ApiResourcePageComponent)

export const apiResourceComponents = [
  ApiResourceComponent,
  ApiResourceEnvelopeComponent,
  ApiResourcePageComponent,
]
