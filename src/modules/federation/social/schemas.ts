// Shapes of the social connections routes (CONTRACT §19).
import { type Static, type TSchema, Type } from 'typebox'
import { DateTime, Page, ref } from '../../../schemas.ts'
import { SOCIAL_PROVIDERS } from './presets.ts'

const Provider = Type.Enum([...SOCIAL_PROVIDERS], {
  description: 'The provider preset; `oidc` and `oauth2` are generic.',
})
const Url = (description: string) => Type.String({ minLength: 1, maxLength: 2000, description })
const Scopes = Type.Array(
  Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' }),
  {
    maxItems: 50,
    uniqueItems: true,
    description:
      'Default: the provider’s minimum for an id and a verified email (`openid email profile` for OpenID Connect providers, `openid email name` for Apple, `read:user user:email` for GitHub, `identify email` for Discord, `email public_profile` for Facebook). An OpenID Connect provider is always asked `openid`.',
  },
)
const Endpoints = Type.Object(
  {
    authorizationUrl: Type.Optional(Url('The authorization endpoint.')),
    tokenUrl: Type.Optional(Url('The token endpoint.')),
    userinfoUrl: Type.Optional(Url('oauth2: where the profile is read (GET, bearer token).')),
    apiUrl: Type.Optional(Url('GitHub Enterprise Server: its REST API base.')),
  },
  {
    additionalProperties: false,
    description:
      'oauth2 (required: authorizationUrl, tokenUrl, userinfoUrl); github (GitHub Enterprise Server: all three of authorizationUrl, tokenUrl, apiUrl). Refused for the other providers.',
  },
)
const ClaimPath = Type.String({
  minLength: 1,
  maxLength: 200,
  // Printable ASCII keys joined by dots.
  pattern: '^[\\x21-\\x2D\\x2F-\\x7E]+(\\.[\\x21-\\x2D\\x2F-\\x7E]+)*$',
})
const Claims = Type.Object(
  {
    id: Type.Optional(ClaimPath),
    email: Type.Optional(ClaimPath),
    emailVerified: Type.Optional(ClaimPath),
    name: Type.Optional(ClaimPath),
  },
  {
    additionalProperties: false,
    description:
      'oauth2 only: dot-separated paths into the profile, such as `data.user.id` (defaults `id`, `email`, `name`; without `emailVerified` no address counts as verified).',
  },
)

const AppleFields = {
  teamId: Type.String({
    pattern: '^[A-Z0-9]{10}$',
    description: 'The Apple developer account’s Team ID (the client secret’s `iss`).',
  }),
  keyId: Type.String({
    pattern: '^[A-Z0-9]{10}$',
    description: 'The Key ID of the Sign in with Apple key (the client secret’s `kid`).',
  }),
  privateKey: Type.String({
    minLength: 1,
    maxLength: 10000,
    description:
      'The key downloaded from Apple (a P-256 private key, PEM PKCS#8, the `.p8` file). Stored sealed; never answered (`hasPrivateKey`).',
  }),
}
const Apple = Type.Object(AppleFields, {
  additionalProperties: false,
  description:
    'apple (required): what the service signs its client secret with (an ES256 JWT, renewed before it expires). Refused for the other providers.',
})
const ApplePatch = Type.Object(
  {
    teamId: Type.Optional(AppleFields.teamId),
    keyId: Type.Optional(AppleFields.keyId),
    privateKey: Type.Optional(AppleFields.privateKey),
  },
  {
    additionalProperties: false,
    description:
      'apple: the fields to change; the others are kept. Refused for the other providers.',
  },
)

const Common = {
  name: Type.String({ minLength: 1, maxLength: 100, description: 'The button’s label.' }),
  clientId: Type.String({ minLength: 1, maxLength: 500 }),
  clientSecret: Type.String({
    minLength: 1,
    maxLength: 2000,
    description:
      'Stored sealed; never answered (`hasClientSecret`). Required, except for apple, which takes none (its secret is signed with `apple.privateKey`).',
  }),
  scopes: Scopes,
  enabled: Type.Boolean(),
  allowSignUp: Type.Boolean({
    description: 'Whether a first sign-in may create an account (default true).',
  }),
  linkByVerifiedEmail: Type.Boolean({
    description:
      'Whether a first sign-in whose verified address matches a user (whose own address is verified) links to that user (default true).',
  }),
  order: Type.Integer({
    minimum: -1000,
    maximum: 1000,
    description: 'Buttons go in ascending order.',
  }),
  issuer: Url(
    'oidc: the issuer (discovery at `{issuer}/.well-known/openid-configuration`); gitlab: a self-managed instance; microsoft: the directory, its id or `common` / `organizations` (default `common`). Refused for the other providers.',
  ),
  endpoints: Endpoints,
  claims: Claims,
}

export const CreateSocialConnectionBody = Type.Object(
  {
    provider: Provider,
    name: Type.Optional(Common.name),
    clientId: Common.clientId,
    clientSecret: Type.Optional(Common.clientSecret),
    apple: Type.Optional(Apple),
    scopes: Type.Optional(Common.scopes),
    enabled: Type.Optional(Common.enabled),
    allowSignUp: Type.Optional(Common.allowSignUp),
    linkByVerifiedEmail: Type.Optional(Common.linkByVerifiedEmail),
    order: Type.Optional(Common.order),
    issuer: Type.Optional(Common.issuer),
    endpoints: Type.Optional(Common.endpoints),
    claims: Type.Optional(Common.claims),
  },
  {
    additionalProperties: false,
    examples: [
      {
        provider: 'google',
        clientId: '1234.apps.googleusercontent.com',
        clientSecret: 'a-client-secret',
      },
    ],
  },
)
export type CreateSocialConnectionBody = Static<typeof CreateSocialConnectionBody>

/**
 * A PATCH's optional provider fields: a value replaces the stored one whole, `null` clears
 * it where the provider goes without (checkShape in service.ts says where it does not).
 */
const Clearable = <T extends TSchema>(schema: T, cleared: string) =>
  Type.Optional(
    Type.Union([schema, Type.Null({ description: cleared })], {
      description: (schema as { description?: string }).description,
    }),
  )

export const PatchSocialConnectionBody = Type.Object(
  {
    name: Type.Optional(Common.name),
    clientId: Type.Optional(Common.clientId),
    clientSecret: Type.Optional(Common.clientSecret),
    apple: Type.Optional(ApplePatch),
    scopes: Type.Optional(Common.scopes),
    enabled: Type.Optional(Common.enabled),
    allowSignUp: Type.Optional(Common.allowSignUp),
    linkByVerifiedEmail: Type.Optional(Common.linkByVerifiedEmail),
    order: Type.Optional(Common.order),
    issuer: Clearable(
      Common.issuer,
      'Clears it: gitlab goes back to gitlab.com, microsoft to `common`; oidc needs one (400 `validation`).',
    ),
    endpoints: Clearable(
      Common.endpoints,
      'Clears them: github goes back to github.com; oauth2 needs them (400 `validation`).',
    ),
    claims: Clearable(
      Common.claims,
      'Clears them: oauth2 reads the default paths (`id`, `email`, `name`) again.',
    ),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Sign in with Google', order: 1 }, { issuer: null }],
  },
)
export type PatchSocialConnectionBody = Static<typeof PatchSocialConnectionBody>

const SocialConnectionComponent = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    provider: Provider,
    name: Type.String(),
    clientId: Type.String(),
    hasClientSecret: Type.Boolean(),
    apple: Type.Union([
      Type.Object({
        teamId: Type.String(),
        keyId: Type.String(),
        hasPrivateKey: Type.Boolean(),
      }),
      Type.Null(),
    ]),
    scopes: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    allowSignUp: Type.Boolean(),
    linkByVerifiedEmail: Type.Boolean(),
    order: Type.Integer(),
    issuer: Type.Union([Type.String(), Type.Null()]),
    endpoints: Type.Union([
      Type.Object({
        authorizationUrl: Type.Optional(Type.String()),
        tokenUrl: Type.Optional(Type.String()),
        userinfoUrl: Type.Optional(Type.String()),
        apiUrl: Type.Optional(Type.String()),
      }),
      Type.Null(),
    ]),
    claims: Type.Union([
      Type.Object({
        id: Type.Optional(Type.String()),
        email: Type.Optional(Type.String()),
        emailVerified: Type.Optional(Type.String()),
        name: Type.Optional(Type.String()),
      }),
      Type.Null(),
    ]),
    callbackUrl: Type.String({ description: 'The redirect URI to register at the provider.' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    $id: 'SocialConnection',
    description: 'A social sign-in connection of the tenant (never its secret).',
  },
)
export const SocialConnectionRecord = ref(SocialConnectionComponent)
export type SocialConnectionRecord = Static<typeof SocialConnectionRecord>

const SocialConnectionEnvelopeComponent = Type.Object(
  { connection: SocialConnectionRecord },
  { $id: 'SocialConnectionEnvelope', description: 'A social sign-in connection.' },
)
export const SocialConnectionEnvelope = ref(SocialConnectionEnvelopeComponent)

const SocialConnectionPageComponent = Page(
  'SocialConnectionPage',
  SocialConnectionRecord,
  'A page of social sign-in connections, oldest first.',
)
export const SocialConnectionPage = ref(SocialConnectionPageComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const socialConnectionComponents = [
  SocialConnectionComponent,
  SocialConnectionEnvelopeComponent,
  SocialConnectionPageComponent,
]
