// Shapes of the applications routes (CONTRACT §11, Applications; §12, Shapes).
import { type Static, Type } from 'typebox'
import { DateTime, Page, PageParams, ref, TenantSlugParams } from '../../schemas.ts'

export const ApplicationType = Type.Union(
  [Type.Literal('web'), Type.Literal('spa'), Type.Literal('native'), Type.Literal('machine')],
  {
    description:
      'web: a server-side app with a secret; spa: a browser app (public, PKCE); native: a mobile or desktop app (public, PKCE, RFC 8252 redirect URIs); machine: client credentials only, with a secret.',
  },
)
export type ApplicationType = Static<typeof ApplicationType>

const Uri = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'An absolute URI without a fragment or credentials: https, or http on localhost, 127.0.0.1 or [::1]; native apps may also use a private-use scheme such as com.example.app:/callback (RFC 8252). Machine apps have none. Anything else is 400 validation.',
})
const UriList = Type.Array(Uri, { maxItems: 20 })
/** An OAuth scope token (RFC 6749 §3.3). */
export const ScopeName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$',
})
const ScopeList = Type.Array(ScopeName, { maxItems: 100, uniqueItems: true })
const Name = Type.String({ minLength: 1, maxLength: 200 })

/** The record as every response shows it: never the secret. */
const ApplicationComponent = Type.Object(
  {
    id: Type.String(),
    clientId: Type.String({ description: 'The OAuth client_id, at this tenant’s issuer only.' }),
    name: Type.String(),
    type: ApplicationType,
    redirectUris: Type.Array(Type.String()),
    postLogoutRedirectUris: Type.Array(Type.String()),
    backchannelLogoutUri: Type.Union([Type.String(), Type.Null()]),
    firstParty: Type.Boolean(),
    allowedScopes: Type.Array(Type.String()),
    dynamic: Type.Boolean({
      description:
        'Registered by the client itself through dynamic registration (RFC 7591); always third-party.',
    }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Application', description: 'An application of the tenant (never its secret).' },
)
export const ApplicationRecord = ref(ApplicationComponent)
export type ApplicationRecord = Static<typeof ApplicationRecord>

export const CreateApplicationBody = Type.Object(
  {
    name: Name,
    type: ApplicationType,
    redirectUris: Type.Optional(UriList),
    postLogoutRedirectUris: Type.Optional(UriList),
    backchannelLogoutUri: Type.Optional(Uri),
    firstParty: Type.Optional(Type.Boolean({ default: true })),
    allowedScopes: Type.Optional(ScopeList),
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Billing', type: 'web', redirectUris: ['https://billing.example.com/callback'] },
      { name: 'Reports job', type: 'machine', allowedScopes: ['reports:read'] },
    ],
  },
)
export type CreateApplicationBody = Static<typeof CreateApplicationBody>

export const PatchApplicationBody = Type.Object(
  {
    name: Type.Optional(Name),
    redirectUris: Type.Optional(UriList),
    postLogoutRedirectUris: Type.Optional(UriList),
    backchannelLogoutUri: Type.Optional(Type.Union([Uri, Type.Null()])),
    firstParty: Type.Optional(Type.Boolean()),
    allowedScopes: Type.Optional(ScopeList),
  },
  { additionalProperties: false, examples: [{ name: 'Billing (EU)' }] },
)
export type PatchApplicationBody = Static<typeof PatchApplicationBody>

const ApplicationEnvelopeComponent = Type.Object(
  {
    application: ApplicationRecord,
    clientSecret: Type.Optional(
      Type.String({
        description: 'Web and machine apps, at creation only: shown this once, never again.',
      }),
    ),
  },
  { $id: 'ApplicationEnvelope', description: 'An application (with its secret, once).' },
)
export const ApplicationEnvelope = ref(ApplicationEnvelopeComponent)

const ClientSecretComponent = Type.Object(
  { clientSecret: Type.String({ description: 'The new secret: shown this once.' }) },
  { $id: 'ClientSecret', description: 'A new client secret; the old one stopped working.' },
)
export const ClientSecret = ref(ClientSecretComponent)

const ApplicationPageComponent = Page(
  'ApplicationPage',
  ApplicationRecord,
  'A page of applications, oldest first.',
)
export const ApplicationPage = ref(ApplicationPageComponent)

export const ListApplicationsQuery = Type.Object({ ...PageParams }, { additionalProperties: false })
export type ListApplicationsQuery = Static<typeof ListApplicationsQuery>

// A malformed id names no application: 404, as an unknown one.
export const ApplicationParams = Type.Object({
  ...TenantSlugParams.properties,
  id: Type.String({ minLength: 1, maxLength: 100 }),
})

/** The components of this module, registered by src/plugins/openapi.ts. */
export const applicationComponents = [
  ApplicationComponent,
  ApplicationEnvelopeComponent,
  ClientSecretComponent,
  ApplicationPageComponent,
]
