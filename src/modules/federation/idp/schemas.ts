// Shapes of the identity-provider routes (SPEC, Identity-provider OAuth; CONTRACT §7).
import { type Static, Type } from 'typebox'
import { ref } from '../../../schemas.ts'

export const CredentialsBody = Type.Object(
  {
    clientId: Type.String({ minLength: 1, maxLength: 512 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 512 }),
  },
  {
    additionalProperties: false,
    examples: [{ clientId: 'tenant-auth-acme', clientSecret: 'the secret the provider issued' }],
  },
)

const AuthorizationStartComponent = Type.Object(
  { authorizationUrl: Type.String({ format: 'uri' }) },
  { $id: 'AuthorizationStart', description: "Where to send the browser: the provider's sign-in." },
)
export const AuthorizationStart = ref(AuthorizationStartComponent)

// The parameters of an authorization response (RFC 6749 §4.1.2, RFC 9207 `iss`). Others a
// provider may add (session_state, scope…) are dropped.
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    state: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    error: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
    iss: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)
export type CallbackQuery = Static<typeof CallbackQuery>

/** The components of this module, registered by src/plugins/openapi.ts. */
export const oauthComponents = [AuthorizationStartComponent]
