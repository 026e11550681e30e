// Shapes of the applications routes (CONTRACT §11, Applications; §12, Shapes).
import { type Static, Type } from 'typebox'
import { DateTime, Page, ref } from '../../schemas.ts'

export const ApplicationType = Type.Union(
  [
    Type.Literal('web'),
    Type.Literal('spa'),
    Type.Literal('native'),
    Type.Literal('machine'),
    Type.Literal('saml'),
  ],
  {
    description:
      'web: a server-side app with a secret; spa: a browser app (public, PKCE); native: a mobile or desktop app (public, PKCE, RFC 8252 redirect URIs); machine: client credentials only, with a secret; saml: a SAML 2.0 service provider the tenant is the identity provider of (CONTRACT §22; no OAuth fields).',
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

/** CONTRACT §22, Client authentication (RFC 6749 §2.3, RFC 7523 §2.2, OIDC Core §9). */
export const TokenEndpointAuthMethod = Type.Union(
  [
    Type.Literal('client_secret_basic'),
    Type.Literal('client_secret_post'),
    Type.Literal('private_key_jwt'),
    Type.Literal('none'),
  ],
  {
    description:
      'How the application authenticates at the token, PAR, introspection and revocation endpoints. web and machine apps: client_secret_basic (default), client_secret_post (either way of sending the secret is accepted) or private_key_jwt (RFC 7523: a JWT signed by a key of jwks or jwksUri, each assertion jti used once); spa and native apps: none (public clients).',
  },
)
export type TokenEndpointAuthMethod = Static<typeof TokenEndpointAuthMethod>

/**
 * A JWK Set of public keys (RFC 7517 §5); private members are refused by the service. A
 * key's other members are kept: in a request by naming none of them (unknown properties
 * are dropped only where a schema says additionalProperties false), in the record by
 * additionalProperties true (the serializer writes only what a schema allows).
 */
function jwksSchema(keyOptions: { additionalProperties?: true }) {
  return Type.Object(
    {
      keys: Type.Array(
        Type.Object({ kty: Type.String({ minLength: 1, maxLength: 10 }) }, keyOptions),
        { minItems: 1, maxItems: 10 },
      ),
    },
    {
      description:
        'The public keys the application signs its private_key_jwt assertions with, as a JWK Set (RSA, EC or OKP; no private members). Either this or jwksUri.',
    },
  )
}
const Jwks = jwksSchema({})
const JwksRecord = jwksSchema({ additionalProperties: true })
const JwksUri = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'An https URL the service fetches the application’s JWK Set from (private_key_jwt), under the egress rule: never a loopback, private or link-local address. Either this or jwks.',
})
export const ApplicationProfile = Type.Union([Type.Literal('fapi2'), Type.Null()], {
  description:
    'fapi2: the FAPI 2.0 Security Profile (a web app only): pushed authorization requests, PKCE S256, DPoP-bound tokens and private_key_jwt are required, responses carry iss, codes live 60 s.',
})
const RequirePar = Type.Boolean({
  description:
    'RFC 9126: the authorization endpoint accepts only a request_uri from the PAR endpoint, never a plain request (always true with profile fapi2).',
})
const RequireDpop = Type.Boolean({
  description:
    'RFC 9449 §5.2 (dpop_bound_access_tokens): the token endpoint issues only DPoP-bound tokens; a request without a DPoP proof is refused (always true with profile fapi2).',
})
const TokenExchange = Type.Boolean({
  description:
    'RFC 8693: the application may exchange a user’s access token of this tenant for one to another of its API resources (confidential applications only).',
})

/** CONTRACT §22's fields, the same on creation and edit (null clears jwks, jwksUri, profile). */
const clientAuthFields = {
  tokenEndpointAuthMethod: Type.Optional(TokenEndpointAuthMethod),
  jwks: Type.Optional(Type.Union([Jwks, Type.Null()])),
  jwksUri: Type.Optional(Type.Union([JwksUri, Type.Null()])),
  requirePushedAuthorizationRequests: Type.Optional(RequirePar),
  requireDpop: Type.Optional(RequireDpop),
  tokenExchange: Type.Optional(TokenExchange),
  profile: Type.Optional(ApplicationProfile),
}

/** CONTRACT §22, SAML IdP: the service provider of a `saml` application. */
export const NameIdFormat = Type.Union(
  [Type.Literal('emailAddress'), Type.Literal('persistent'), Type.Literal('unspecified')],
  {
    description:
      'The NameID the assertion carries: emailAddress (the user’s email, the default), persistent (an opaque id per user and application, stable) or unspecified (the user’s id).',
  },
)
export const SamlAttributeSource = Type.Union(
  [
    Type.Literal('email'),
    Type.Literal('givenName'),
    Type.Literal('familyName'),
    Type.Literal('displayName'),
    Type.Literal('roles'),
    Type.Literal('id'),
  ],
  { description: 'The user field an attribute is taken from (roles: one value per role).' },
)
const SamlAttribute = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    from: SamlAttributeSource,
  },
  { additionalProperties: false },
)
const SamlAttributes = Type.Array(SamlAttribute, {
  maxItems: 30,
  description: 'The attributes of the assertion, each named as the SP expects it.',
})
const EntityId = Type.String({
  minLength: 1,
  maxLength: 1024,
  description:
    'The SP’s entity id (its AuthnRequests’ Issuer, the assertion’s Audience), unique in the tenant.',
})
const AcsUrl = Type.String({ minLength: 1, maxLength: 2000 })
const AcsUrls = Type.Array(AcsUrl, {
  minItems: 1,
  maxItems: 20,
  description:
    'The SP’s Assertion Consumer Service URLs (HTTP-POST): https (http only on localhost, 127.0.0.1 or [::1]). An AuthnRequest naming another is refused; the first is used when none is named.',
})
const Pem = Type.String({ minLength: 1, maxLength: 20000 })
const SpCertificates = Type.Array(Pem, {
  maxItems: 5,
  description:
    'The SP’s signing certificates (PEM). When any is set, AuthnRequests must be signed by one of them.',
})
const SpMetadataXml = Type.String({
  minLength: 1,
  maxLength: 256 * 1024,
  description:
    'The SP’s SAML metadata document: fills entityId, acsUrls (HTTP-POST), spCertificates and nameIdFormat where they are not given.',
})
const SignResponse = Type.Boolean({
  description: 'Also sign the Response around the (always signed) assertion.',
})

/** The SAML fields of creation and edit (a `saml` application's only, 400 on any other). */
const samlFields = {
  entityId: Type.Optional(EntityId),
  acsUrls: Type.Optional(AcsUrls),
  nameIdFormat: Type.Optional(NameIdFormat),
  attributes: Type.Optional(SamlAttributes),
  spCertificates: Type.Optional(SpCertificates),
  spMetadataXml: Type.Optional(SpMetadataXml),
  signResponse: Type.Optional(SignResponse),
}
export const SAML_INPUT_KEYS = Object.keys(samlFields)

const SamlRecordComponent = Type.Object(
  {
    entityId: Type.String(),
    acsUrls: Type.Array(Type.String()),
    nameIdFormat: NameIdFormat,
    attributes: Type.Array(Type.Object({ name: Type.String(), from: SamlAttributeSource })),
    spCertificates: Type.Array(Type.String()),
    signResponse: Type.Boolean(),
    acsIndexes: Type.Array(
      Type.Object({ index: Type.Integer({ minimum: 0, maximum: 65535 }), url: Type.String() }),
      {
        description:
          'Read only, from spMetadataXml: the index the SP’s metadata gives each of acsUrls, which an AuthnRequest’s AssertionConsumerServiceIndex names. Empty for an application made from fields: an index is then the position in acsUrls (0 the first).',
      },
    ),
  },
  { $id: 'SamlServiceProvider', description: 'The service provider of a saml application.' },
)

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
    tokenEndpointAuthMethod: TokenEndpointAuthMethod,
    jwks: Type.Union([JwksRecord, Type.Null()]),
    jwksUri: Type.Union([Type.String(), Type.Null()]),
    requirePushedAuthorizationRequests: RequirePar,
    requireDpop: RequireDpop,
    tokenExchange: TokenExchange,
    profile: ApplicationProfile,
    saml: Type.Union([ref(SamlRecordComponent), Type.Null()], {
      description: 'A saml application’s service provider; null for the other types.',
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
    ...clientAuthFields,
    ...samlFields,
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Billing', type: 'web', redirectUris: ['https://billing.example.com/callback'] },
      { name: 'Reports job', type: 'machine', allowedScopes: ['reports:read'] },
      {
        name: 'Wiki',
        type: 'saml',
        entityId: 'https://wiki.example.com/saml/metadata',
        acsUrls: ['https://wiki.example.com/saml/acs'],
      },
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
    ...clientAuthFields,
    ...samlFields,
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

/** The components of this module, registered by src/plugins/openapi.ts. */
export const applicationComponents = [
  SamlRecordComponent,
  ApplicationComponent,
  ApplicationEnvelopeComponent,
  ClientSecretComponent,
  ApplicationPageComponent,
]
