// Shapes of the SSO connections routes (CONTRACT §12).
import { type Static, Type } from 'typebox'
import { DateTime, Page, Role, ref, Uuid } from '../../schemas.ts'

const Name = Type.String({ minLength: 1, maxLength: 200 })
const ConnectionType = Type.Union([Type.Literal('oidc'), Type.Literal('saml')])
const Domains = Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
  minItems: 1,
  maxItems: 100,
  description:
    'Email domains this connection owns: DNS names of two labels or more, folded to lowercase, IDNs in their punycode form. A domain belongs to at most one connection of the tenant (409 domain_taken).',
})
const HttpsUrl = (description: string) =>
  Type.String({ minLength: 1, maxLength: 2000, description })
const Certificate = Type.String({
  minLength: 1,
  maxLength: 20_000,
  description: 'An X.509 certificate in PEM.',
})

const OidcInput = {
  issuer: HttpsUrl(
    'The issuer; its discovery document is fetched at `{issuer}/.well-known/openid-configuration` under the egress rule.',
  ),
  clientId: Type.String({ minLength: 1, maxLength: 500 }),
  clientSecret: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'Stored sealed; never answered.',
  }),
  scopes: Type.Array(
    Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' }),
    {
      maxItems: 50,
      uniqueItems: true,
      description: 'Default `["openid","email","profile"]`; `openid` is always asked.',
    },
  ),
}

const SamlInput = {
  idpMetadataXml: Type.String({
    minLength: 1,
    maxLength: 512 * 1024,
    description: 'The IdP’s metadata XML; read for the three fields below (sent alone).',
  }),
  idpEntityId: Type.String({ minLength: 1, maxLength: 1000 }),
  idpSsoUrl: HttpsUrl('The IdP’s SingleSignOnService for the HTTP-Redirect binding.'),
  idpCertificates: Type.Array(Certificate, {
    maxItems: 10,
    description: 'The IdP’s signing certificates (at least one).',
  }),
}

const RoleRuleInput = Type.Object(
  {
    claim: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'An OIDC claim or SAML attribute name, e.g. `groups`.',
    }),
    value: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Matches a claim equal to it, or a list claim holding it.',
    }),
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 50,
      description: 'Custom role names (an unknown one: 400 `validation` naming it).',
    }),
  },
  { additionalProperties: false },
)
const OrganizationId = Type.Union([Uuid, Type.Null()], {
  description:
    'CONTRACT §18: an organization of the tenant (an unknown id, or another tenant’s: 400 `validation`); an SSO sign-in through the connection makes the user a member of it, with its `jit.roles`, unless a member already. Null: none. Deleting the organization sets it to null.',
})

const RoleMapping = Type.Array(RoleRuleInput, {
  maxItems: 100,
  description:
    'CONTRACT §17: at every SSO sign-in the roles that came from this mapping are replaced by those the assertion maps to; roles held directly are kept. Replaced whole by a PATCH.',
})

export const CreateConnectionBody = Type.Object(
  {
    name: Name,
    type: ConnectionType,
    domains: Domains,
    enabled: Type.Optional(Type.Boolean({ default: true })),
    jitProvisioning: Type.Optional(Type.Boolean({ default: true })),
    defaultRole: Type.Optional(Role),
    enforce: Type.Optional(Type.Boolean({ default: false })),
    mfaSatisfied: Type.Optional(Type.Boolean({ default: false })),
    roleMapping: Type.Optional(RoleMapping),
    organizationId: Type.Optional(OrganizationId),
    oidc: Type.Optional(
      Type.Object(
        {
          issuer: OidcInput.issuer,
          clientId: OidcInput.clientId,
          clientSecret: OidcInput.clientSecret,
          scopes: Type.Optional(OidcInput.scopes),
        },
        { description: 'Required for type oidc; refused for saml.' },
      ),
    ),
    saml: Type.Optional(
      Type.Object(
        {
          idpMetadataXml: Type.Optional(SamlInput.idpMetadataXml),
          idpEntityId: Type.Optional(SamlInput.idpEntityId),
          idpSsoUrl: Type.Optional(SamlInput.idpSsoUrl),
          idpCertificates: Type.Optional(SamlInput.idpCertificates),
        },
        {
          description:
            'Required for type saml (refused for oidc): `{idpMetadataXml}` alone, or `{idpEntityId, idpSsoUrl, idpCertificates}`.',
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Okta',
        type: 'oidc',
        domains: ['example.com'],
        oidc: {
          issuer: 'https://example.okta.com',
          clientId: '0oa1example',
          clientSecret: 'a-client-secret',
        },
      },
    ],
  },
)
export type CreateConnectionBody = Static<typeof CreateConnectionBody>

export const PatchConnectionBody = Type.Object(
  {
    name: Type.Optional(Name),
    domains: Type.Optional(Domains),
    enabled: Type.Optional(Type.Boolean()),
    jitProvisioning: Type.Optional(Type.Boolean()),
    defaultRole: Type.Optional(Role),
    enforce: Type.Optional(Type.Boolean()),
    mfaSatisfied: Type.Optional(Type.Boolean()),
    roleMapping: Type.Optional(RoleMapping),
    organizationId: Type.Optional(OrganizationId),
    oidc: Type.Optional(
      Type.Object(
        {
          issuer: Type.Optional(OidcInput.issuer),
          clientId: Type.Optional(OidcInput.clientId),
          clientSecret: Type.Optional(OidcInput.clientSecret),
          scopes: Type.Optional(OidcInput.scopes),
        },
        { description: 'Merged into the connection’s; the secret is kept unless one is given.' },
      ),
    ),
    saml: Type.Optional(
      Type.Object(
        {
          idpMetadataXml: Type.Optional(SamlInput.idpMetadataXml),
          idpEntityId: Type.Optional(SamlInput.idpEntityId),
          idpSsoUrl: Type.Optional(SamlInput.idpSsoUrl),
          idpCertificates: Type.Optional(SamlInput.idpCertificates),
        },
        {
          description:
            'Merged into the connection’s; `idpMetadataXml` (alone) replaces all three fields.',
        },
      ),
    ),
  },
  { additionalProperties: false, examples: [{ enforce: true }] },
)
export type PatchConnectionBody = Static<typeof PatchConnectionBody>

const ConnectionComponent = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: ConnectionType,
    domains: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    jitProvisioning: Type.Boolean(),
    defaultRole: Role,
    enforce: Type.Boolean(),
    mfaSatisfied: Type.Boolean(),
    hasClientSecret: Type.Boolean({ description: 'Whether an OIDC client secret is stored.' }),
    roleMapping: Type.Array(
      Type.Object({
        claim: Type.String(),
        value: Type.String(),
        roles: Type.Array(Type.String(), { description: 'Role names, sorted.' }),
      }),
      { description: 'Claim values mapped to custom roles at each SSO sign-in.' },
    ),
    organizationId: Type.Union([Type.String(), Type.Null()], {
      description: 'The organization (CONTRACT §18) its sign-ins join, or null.',
    }),
    oidc: Type.Union([
      Type.Object({
        issuer: Type.String(),
        clientId: Type.String(),
        scopes: Type.Array(Type.String()),
        hasClientSecret: Type.Boolean(),
        redirectUri: Type.String({ description: 'The redirect URI to register at the IdP.' }),
      }),
      Type.Null(),
    ]),
    saml: Type.Union([
      Type.Object({
        idpEntityId: Type.String(),
        idpSsoUrl: Type.String(),
        idpCertificates: Type.Array(Type.String()),
        spEntityId: Type.String({ description: 'Our entityID, to register at the IdP.' }),
        acsUrl: Type.String({ description: 'Our Assertion Consumer Service (HTTP-POST).' }),
        metadataUrl: Type.String({ description: 'Our SP metadata.' }),
      }),
      Type.Null(),
    ]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'SsoConnection', description: 'An SSO connection of the tenant (never its secret).' },
)
export const ConnectionRecord = ref(ConnectionComponent)
export type ConnectionRecord = Static<typeof ConnectionRecord>

const ConnectionEnvelopeComponent = Type.Object(
  { connection: ConnectionRecord },
  { $id: 'SsoConnectionEnvelope', description: 'An SSO connection.' },
)
export const ConnectionEnvelope = ref(ConnectionEnvelopeComponent)

const ConnectionPageComponent = Page(
  'SsoConnectionPage',
  ConnectionRecord,
  'A page of SSO connections, oldest first.',
)
export const ConnectionPage = ref(ConnectionPageComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const ssoConnectionComponents = [
  ConnectionComponent,
  ConnectionEnvelopeComponent,
  ConnectionPageComponent,
]
