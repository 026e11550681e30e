// Shapes of the passkey routes (CONTRACT §9, Passkeys; WebAuthn Level 3). The ceremony
// options are the JSON forms of PublicKeyCredentialCreationOptions and
// PublicKeyCredentialRequestOptions (WebAuthn §5.4 and §5.5: binary members as base64url),
// ready for `PublicKeyCredential.parseCreationOptionsFromJSON` or @simplewebauthn/browser.
// The credential a browser answers is the JSON of RegistrationResponseJSON /
// AuthenticationResponseJSON; every binary member is base64url with a size bound, so a
// malformed or oversized one is a 400 before anything is read or written.
import { type Static, Type } from 'typebox'
import { DateTime, Email, NullableDateTime, ref, Uuid } from '../../schemas.ts'

/** base64url without padding (WebAuthn's JSON encoding), at most `max` characters. */
const B64 = (max: number, min = 1, description?: string) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]*$', minLength: min, maxLength: max, description })

// Bounds: a credential id is at most 1023 bytes (WebAuthn §4, Credential ID) = 1364
// characters; clientDataJSON is a small JSON object; attestation is `none`, but an
// authenticator may still send a statement with a certificate chain, so the attestation
// object gets room for one; an RSA-4096 or ML-DSA signature fits in 4 KiB of base64url.
const CredentialId = B64(1364, 16, 'base64url credential id')
const TRANSPORT = Type.String({ pattern: '^[a-z-]{1,32}$', maxLength: 32 })
const Transports = Type.Array(TRANSPORT, { maxItems: 8 })
const Extensions = Type.Object({}, { description: 'Client extension results (not used).' })

const PasskeyComponent = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    createdAt: DateTime,
    lastUsedAt: NullableDateTime,
  },
  { $id: 'Passkey', description: 'A passkey (WebAuthn credential) of the signed-in user.' },
)
export const Passkey = ref(PasskeyComponent)
export type Passkey = Static<typeof Passkey>

const PasskeyListComponent = Type.Object(
  { items: Type.Array(Passkey) },
  { $id: 'PasskeyList', description: 'The passkeys of the signed-in user, newest first.' },
)
export const PasskeyList = ref(PasskeyListComponent)

const Descriptor = Type.Object({
  id: Type.String({ description: 'base64url credential id' }),
  type: Type.Literal('public-key'),
  transports: Type.Optional(Type.Array(Type.String())),
})

const CreationOptionsComponent = Type.Object(
  {
    challenge: Type.String({ description: 'base64url; single use, valid 5 minutes' }),
    rp: Type.Object({ name: Type.String(), id: Type.String() }),
    user: Type.Object({
      id: Type.String({ description: 'base64url user handle (the 16 bytes of the user id)' }),
      name: Type.String(),
      displayName: Type.String(),
    }),
    pubKeyCredParams: Type.Array(
      Type.Object({ alg: Type.Integer(), type: Type.Literal('public-key') }),
    ),
    timeout: Type.Integer({ description: 'Milliseconds' }),
    attestation: Type.String(),
    excludeCredentials: Type.Array(Descriptor),
    authenticatorSelection: Type.Object({
      residentKey: Type.String(),
      requireResidentKey: Type.Boolean(),
      userVerification: Type.String(),
    }),
    extensions: Type.Object({ credProps: Type.Boolean() }),
  },
  {
    $id: 'PasskeyCreationOptions',
    description: 'PublicKeyCredentialCreationOptions as JSON, for navigator.credentials.create.',
  },
)
export const CreationOptions = ref(CreationOptionsComponent)

const RequestOptionsComponent = Type.Object(
  {
    challenge: Type.String({ description: 'base64url; single use, valid 5 minutes' }),
    rpId: Type.String(),
    timeout: Type.Integer({ description: 'Milliseconds' }),
    allowCredentials: Type.Array(Descriptor, {
      description: 'Empty: any discoverable credential of this site.',
    }),
    userVerification: Type.String(),
  },
  {
    $id: 'PasskeyRequestOptions',
    description: 'PublicKeyCredentialRequestOptions as JSON, for navigator.credentials.get.',
  },
)
export const RequestOptions = ref(RequestOptionsComponent)

const credential = {
  id: CredentialId,
  rawId: CredentialId,
  type: Type.Literal('public-key'),
  authenticatorAttachment: Type.Optional(
    Type.Union([Type.Literal('platform'), Type.Literal('cross-platform')]),
  ),
  clientExtensionResults: Type.Optional(Extensions),
}

const ClientDataJSON = B64(4096, 2)

export const RegistrationCredential = Type.Object(
  {
    ...credential,
    response: Type.Object(
      {
        clientDataJSON: ClientDataJSON,
        attestationObject: B64(24_000, 2),
        transports: Type.Optional(Transports),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)
export type RegistrationCredential = Static<typeof RegistrationCredential>

export const AuthenticationCredential = Type.Object(
  {
    ...credential,
    response: Type.Object(
      {
        clientDataJSON: ClientDataJSON,
        authenticatorData: B64(4096, 50), // 37 bytes at least: 50 characters
        signature: B64(6000, 2),
        userHandle: Type.Optional(B64(86, 0)), // at most 64 bytes (WebAuthn §5.4.3)
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)
export type AuthenticationCredential = Static<typeof AuthenticationCredential>

const example = {
  id: 'x4Ba8vXb3Qf0kL8oYbVd5A',
  rawId: 'x4Ba8vXb3Qf0kL8oYbVd5A',
  type: 'public-key',
}

export const RegisterBody = Type.Object(
  {
    response: RegistrationCredential,
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'How the passkey is listed; default: the browser and system family.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Laptop',
        response: {
          ...example,
          response: {
            clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0',
            attestationObject: 'o2NmbXRkbm9uZQ',
          },
          clientExtensionResults: {},
        },
      },
    ],
  },
)
export type RegisterBody = Static<typeof RegisterBody>

export const SignInOptionsBody = Type.Object(
  { email: Type.Optional(Email) },
  { additionalProperties: false, examples: [{}, { email: 'ada@example.com' }] },
)

export const SignInBody = Type.Object(
  { response: AuthenticationCredential },
  {
    additionalProperties: false,
    examples: [
      {
        response: {
          ...example,
          response: {
            clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0',
            authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
            signature: 'MEUCIQDx',
          },
          clientExtensionResults: {},
        },
      },
    ],
  },
)

export const PasskeyParams = Type.Object({
  tenantSlug: Type.String({ minLength: 1, maxLength: 200 }),
  id: Uuid,
})

/** The components of this module, registered by src/plugins/openapi.ts. */
export const passkeyComponents = [
  PasskeyComponent,
  PasskeyListComponent,
  CreationOptionsComponent,
  RequestOptionsComponent,
]
