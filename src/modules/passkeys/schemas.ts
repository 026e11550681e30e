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
  rawId: B64(1364, 16, 'the same credential id as `id`'),
  type: Type.Literal('public-key'),
  authenticatorAttachment: Type.Optional(
    Type.Union([Type.Literal('platform'), Type.Literal('cross-platform')]),
  ),
  clientExtensionResults: Type.Optional(Extensions),
}

// What a JSON schema cannot say of these members, the service checks before anything else
// (webauthn.ts) and answers 400 validation; the descriptions say it.
const ClientDataJSON = B64(
  4096,
  2,
  'base64url of the client data (WebAuthn §5.8.1): a JSON object with string `type`, `origin` and `challenge` (the base64url challenge of the options).',
)

export const RegistrationCredential = Type.Object(
  {
    ...credential,
    response: Type.Object(
      {
        clientDataJSON: ClientDataJSON,
        attestationObject: B64(
          24_000,
          2,
          'base64url of the CBOR attestation object: `fmt`, `attStmt` and `authData` with the attested credential.',
        ),
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
        // 37 bytes at least: 50 characters
        authenticatorData: B64(4096, 50, 'base64url of the authenticator data (WebAuthn §6.1).'),
        signature: B64(6000, 2),
        userHandle: Type.Optional(B64(86, 0)), // at most 64 bytes (WebAuthn §5.4.3)
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)
export type AuthenticationCredential = Static<typeof AuthenticationCredential>

// The examples are whole ceremonies as a browser sends them (an ES256 platform passkey,
// `none` attestation), so the service reads them as it reads a real one: client data with
// its type, challenge and origin, a CBOR attestation object with a credential, authenticator
// data and a DER signature. The challenges were never issued, so they end in a 401.
const example = {
  id: 'x4Ba8vXb3Qf0kL8oYbVd5A',
  rawId: 'x4Ba8vXb3Qf0kL8oYbVd5A',
  type: 'public-key',
  authenticatorAttachment: 'platform',
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
            clientDataJSON:
              'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiazNQd0I4UXoxdlI2dE4weVg0bUw5c0QyZkc3aEo1Y0E4ZVUxaU8zblY2dyIsIm9yaWdpbiI6Imh0dHBzOi8vYXV0aC5leGFtcGxlLmNvbSIsImNyb3NzT3JpZ2luIjpmYWxzZX0',
            attestationObject:
              'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YViUwgTIVP_l81o7hSCL2YnGDRxW1Wz9mm4vWPKLltF-BzNFAAAAAAAAAAAAAAAAAAAAAAAAAAAAEMeAWvL1290H9JC_KGG1XeSlAQIDJiABIVggW-4vMVJzW5ObpHCHfhqmWeKRnf2mgUl7-Pjs5QZ8Tj4iWCCVhrXkz3D0zDMjVAqcp8Q5MWI79_ZBPuHELH2GpO1ICg',
            transports: ['internal', 'hybrid'],
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
            clientDataJSON:
              'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiWm05UTJ3Ujh0WTR1STZvUDBhUzNkRjVnSDdqSzlsTDF6WDJjVjRiTjZtTSIsIm9yaWdpbiI6Imh0dHBzOi8vYXV0aC5leGFtcGxlLmNvbSIsImNyb3NzT3JpZ2luIjpmYWxzZX0',
            authenticatorData: 'wgTIVP_l81o7hSCL2YnGDRxW1Wz9mm4vWPKLltF-BzMFAAAAAQ',
            signature:
              'MEYCIQDfqKrN6T2OOh99Ke6xZ8IO78xiNAVLKB5nVyR_qadYlgIhALBqrVyXCK_NqZGTL2IiJK6c9PcHY7DvbUHDLFQvNDNA',
            userHandle: 'AZOhsgAAcACAAAAAAAAAAQ',
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
