// Shapes of token introspection (RFC 7662) and the JWK Set (RFC 7517) (CONTRACT §10).
import { type Static, Type } from 'typebox'
import { ref } from '../../schemas.ts'

/** An access token is a few hundred characters; 4 KiB bounds what is parsed and hashed. */
export const IntrospectBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'The access token to check.',
    }),
  },
  {
    examples: [
      {
        token:
          'eyJhbGciOiJFUzI1NiIsImtpZCI6Ik5wY1p5cjdMIn0.eyJzdWIiOiIwMTkzYTFiMi0wMDAwLTcwMDAtODAwMC0wMDAwMDAwMDAwMDEifQ.c2lnbmF0dXJl',
      },
    ],
  },
)
export type IntrospectBody = Static<typeof IntrospectBody>

export const ActiveToken = Type.Object(
  {
    active: Type.Literal(true),
    sub: Type.String({ description: 'The user id.' }),
    tid: Type.String({ description: 'The tenant id.' }),
    role: Type.String({
      description:
        "The user's role now (read with the session), not the role the token was issued with.",
    }),
    roles: Type.Optional(
      Type.Array(Type.String(), {
        description:
          "The user's custom role names now, sorted (CONTRACT §17); absent when it holds none.",
      }),
    ),
    sid: Type.String({ description: 'The session id.' }),
    iat: Type.Integer(),
    exp: Type.Integer(),
    iss: Type.String(),
  },
  { additionalProperties: false },
)

/** RFC 7662 §2.2: nothing more is said of a token that is not active, not even why. */
export const InactiveToken = Type.Object(
  { active: Type.Literal(false) },
  { additionalProperties: false },
)

const IntrospectionComponent = Type.Union([ActiveToken, InactiveToken], {
  $id: 'Introspection',
  description: 'RFC 7662: the claims of an active token, or only `active: false`.',
})
export const Introspection = ref(IntrospectionComponent)
export type Introspection = Static<typeof IntrospectionComponent>

/** A public key: the members of RFC 7518 §6.2 (EC) or RFC 8037 §2 (OKP), never `d`. */
export const PublicJwk = Type.Object({
  kty: Type.String(),
  crv: Type.String(),
  x: Type.String(),
  y: Type.Optional(Type.String()),
  kid: Type.String({ description: 'The JWK thumbprint (RFC 7638) tokens name in their header.' }),
  alg: Type.Union([Type.Literal('ES256'), Type.Literal('EdDSA')]),
  use: Type.Literal('sig'),
})

const JwkSetComponent = Type.Object(
  { keys: Type.Array(PublicJwk) },
  { $id: 'JwkSet', description: 'RFC 7517: the public keys that verify access tokens.' },
)
export const JwkSet = ref(JwkSetComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const introspectionComponents = [IntrospectionComponent, JwkSetComponent]
