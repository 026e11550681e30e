// What a client may register about itself (CONTRACT §11, Dynamic registration; RFC 7591 §2):
// the rules an admin's application obeys, checked on the request's JSON before oidc-provider
// sees it, and the metadata it is then given: only the fields an applications row keeps,
// each with the value the row will answer (RFC 7591 §3.2.1 lets the server replace what was
// asked), so the 201 response describes exactly the client the provider will find later.
// Other metadata is ignored (RFC 7591 §2: "MUST ignore any client metadata ... it does not
// understand"), and so is never fetched (sector_identifier_uri) nor echoed; jwks and
// jwks_uri are kept for a client that authenticates by private_key_jwt (CONTRACT §22).
import { type Jwks, jwksProblems } from '../applications/client-auth.ts'
import { backchannelUriProblem, redirectUriProblem } from '../applications/redirect-uris.ts'
import type { ApplicationType } from '../applications/schemas.ts'
import { GRANTS } from './clients.ts'

/** RFC 7591 §3.2.2 error codes. */
export type RegistrationErrorCode = 'invalid_redirect_uri' | 'invalid_client_metadata'

export interface RegistrationError {
  error: RegistrationErrorCode
  error_description: string
}

/**
 * The client authentications a registered client may choose (RFC 7591 §2): those of an
 * admin's application (CONTRACT §22). oidc-provider takes a client's secret by HTTP Basic or
 * in the body alike; the row keeps which was registered.
 */
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt']
/** The applications schema's limits (applications/schemas.ts). */
const MAX_URIS = 20
const MAX_URI_LENGTH = 2000
const MAX_NAME_LENGTH = 200

class Refused extends Error {
  readonly code: RegistrationErrorCode
  constructor(code: RegistrationErrorCode, description: string) {
    super(description)
    this.code = code
  }
}

const metadataError = (description: string) => new Refused('invalid_client_metadata', description)

/**
 * The application type a registration asks for: `native` (RFC 8252), a browser app (`spa`,
 * public: token_endpoint_auth_method none, PKCE required), or a server-side `web` app with
 * a secret. Never `machine`: client credentials are an admin's decision.
 */
export function registeredType(applicationType: unknown, authMethod: unknown): ApplicationType {
  if (applicationType === 'native') return 'native'
  return authMethod === 'none' ? 'spa' : 'web'
}

function stringList(value: unknown, field: string, code: RegistrationErrorCode): string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new Refused(code, `${field} must be an array of strings`)
  }
  if (value.length > MAX_URIS) throw new Refused(code, `${field} holds at most ${MAX_URIS} URIs`)
  return value as string[]
}

function uris(value: unknown, field: string, type: ApplicationType, code: RegistrationErrorCode) {
  const list = stringList(value, field, code)
  list.forEach((uri, i) => {
    const problem =
      uri.length > MAX_URI_LENGTH
        ? `is longer than ${MAX_URI_LENGTH} characters`
        : redirectUriProblem(uri, type)
    if (problem) throw new Refused(code, `${field}[${i}] ${problem}`)
  })
  return list
}

/** A name for the consent page when the client gives none: where it sends people back to. */
function defaultName(redirectUri: string): string {
  const url = new URL(redirectUri)
  return url.host || url.protocol.slice(0, -1)
}

function check(input: Record<string, unknown>): Record<string, unknown> {
  const applicationType = input.application_type ?? 'web'
  if (applicationType !== 'web' && applicationType !== 'native') {
    throw metadataError('application_type must be web or native')
  }
  // RFC 8252 §8.4: a native app cannot keep a secret, so it is public unless it asks otherwise.
  const authMethod =
    input.token_endpoint_auth_method ??
    (applicationType === 'native' ? 'none' : 'client_secret_basic')
  if (typeof authMethod !== 'string' || !AUTH_METHODS.includes(authMethod)) {
    throw metadataError(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`)
  }
  if (applicationType === 'native' && authMethod !== 'none') {
    throw metadataError('a native application is a public client: token_endpoint_auth_method none')
  }
  const type = registeredType(applicationType, authMethod)
  const grants = GRANTS[type]
  const asked = stringList(
    input.grant_types ?? ['authorization_code'],
    'grant_types',
    'invalid_client_metadata',
  )
  // The description never repeats what was sent: RFC 6749 §5.2 keeps it to plain ASCII.
  if (asked.some((grant) => !grants.includes(grant))) {
    throw metadataError(`grant_types: a ${type} client may have only ${grants.join(', ')}`)
  }
  if (!asked.includes('authorization_code')) {
    throw metadataError('grant_types must include authorization_code')
  }
  const responseTypes = input.response_types ?? ['code']
  if (!Array.isArray(responseTypes) || responseTypes.length !== 1 || responseTypes[0] !== 'code') {
    throw metadataError('response_types must be code alone')
  }
  if (input.redirect_uris === undefined) {
    throw new Refused('invalid_redirect_uri', 'redirect_uris is required')
  }
  const redirectUris = uris(input.redirect_uris, 'redirect_uris', type, 'invalid_redirect_uri')
  if (redirectUris.length === 0) {
    throw new Refused('invalid_redirect_uri', 'redirect_uris must hold at least one URI')
  }
  const postLogout = uris(
    input.post_logout_redirect_uris ?? [],
    'post_logout_redirect_uris',
    type,
    'invalid_client_metadata',
  )
  const keys = authMethod === 'private_key_jwt' ? clientKeys(input) : {}
  const name = input.client_name ?? defaultName(redirectUris[0])
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH) {
    throw metadataError(`client_name must be a string of 1 to ${MAX_NAME_LENGTH} characters`)
  }
  return {
    application_type: applicationType,
    token_endpoint_auth_method: authMethod,
    grant_types: grants,
    response_types: ['code'],
    redirect_uris: redirectUris,
    post_logout_redirect_uris: postLogout,
    client_name: name,
    ...keys,
  }
}

/** RFC 7591 §2: a private_key_jwt client's jwks or jwks_uri, one of them, under the admin API's rules. */
function clientKeys(input: Record<string, unknown>) {
  const { jwks, jwks_uri: uri } = input
  if ((jwks === undefined) === (uri === undefined)) {
    throw metadataError('private_key_jwt needs jwks or jwks_uri, one of them')
  }
  if (uri !== undefined) {
    if (typeof uri !== 'string' || uri.length > MAX_URI_LENGTH) {
      throw metadataError('jwks_uri must be an https URL')
    }
    const problem = backchannelUriProblem(uri)
    if (problem) throw metadataError(`jwks_uri ${problem}`)
    return { jwks_uri: uri }
  }
  const set = jwks as Jwks
  if (
    typeof set !== 'object' ||
    set === null ||
    !Array.isArray(set.keys) ||
    set.keys.length === 0 ||
    set.keys.length > 10 ||
    set.keys.some((key) => typeof key !== 'object' || key === null)
  ) {
    throw metadataError('jwks must be a JWK Set of 1 to 10 public keys')
  }
  const problems = jwksProblems(set, 'jwks')
  if (problems.length > 0) throw metadataError(`${problems[0].path}: ${problems[0].message}`)
  return { jwks: { keys: set.keys } }
}

/**
 * The metadata to register for the request's JSON object `input`, or the RFC 7591 error
 * that refuses it.
 */
export function registrationMetadata(
  input: Record<string, unknown>,
): { metadata: Record<string, unknown> } | { refused: RegistrationError } {
  try {
    return { metadata: check(input) }
  } catch (error) {
    if (!(error instanceof Refused)) throw error
    return { refused: { error: error.code, error_description: error.message } }
  }
}
