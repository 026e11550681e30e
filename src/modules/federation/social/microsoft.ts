// The Microsoft preset (CONTRACT §19): the Microsoft identity platform's v2.0 endpoint, whose
// issuer names the user's directory: `https://login.microsoftonline.com/{tid}/v2.0`
// (https://learn.microsoft.com/entra/identity-platform/access-tokens#validate-the-issuer).
// A connection names one directory (its id), or `common` / `organizations` for any; the
// latter's discovery document answers the issuer as a template with `{tenantid}`. So the ID
// token's issuer is checked against the one its own `tid` claim makes, the `tid` against the
// connection's directory when it names one, and the token itself here (signature by the
// discovered keys, audience, nonce, expiry) with jose, since openid-client can only compare
// the issuer with one fixed value. Every request goes through the egress rule of §13.
//
// Microsoft's `email` claim is an attribute the directory's admins set, not an address
// Microsoft verified (the "nOAuth" account takeovers): it counts as verified only when the
// token says the domain's owner verified it (`xms_edov`, an optional claim the app
// registration adds), or for a personal Microsoft account (the consumers directory).
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose'
import type * as Client from 'openid-client'
import type { Deps } from '../../../deps.ts'
import { egressClientFetch } from '../oidc-signin.ts'
import { oidcProfile, type Profile, ProfileError } from './presets.ts'
import type { SocialConnection } from './queries.ts'

const DEFAULT_TEMPLATE = 'https://login.microsoftonline.com/{tid}/v2.0'
/** The directory of personal Microsoft accounts. */
const CONSUMERS = '9188040d-6c67-4c5b-b112-36a304b66dad'
const MULTI = new Set(['common', 'organizations'])
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** The token response field the ID token is set aside in, for the check below. */
const ASIDE = 'microsoft_id_token'
const JWKS_TTL_MS = 60 * 60 * 1000

/** A connection's directory as stored (`issuer`): a directory id, `common` or `organizations`. */
export function isMicrosoftDirectory(value: string): boolean {
  return MULTI.has(value) || GUID.test(value)
}

const directoryOf = (connection: Pick<SocialConnection, 'issuer'>) => connection.issuer ?? 'common'

function templateOf(deps: Pick<Deps, 'config'>): string {
  return deps.config.socialProviderEndpoints.microsoft?.issuer ?? DEFAULT_TEMPLATE
}

async function getJson(deps: Pick<Deps, 'config'>, url: string): Promise<Record<string, unknown>> {
  const response = await egressClientFetch(deps)(url, {
    method: 'GET',
    headers: { accept: 'application/json' },
  } as unknown as Parameters<Client.CustomFetch>[1])
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  const value = await response.json()
  if (typeof value !== 'object' || value === null) throw new Error(`${url}: not a JSON object`)
  return value as Record<string, unknown>
}

/**
 * The client of a Microsoft connection: the directory's discovery document (its issuer the
 * directory's own, or the `{tenantid}` template for common and organizations), the ID token
 * set aside from token responses for microsoftProfile's check.
 */
export async function microsoftClient(
  deps: Pick<Deps, 'config'>,
  lib: typeof Client,
  connection: SocialConnection,
  clientAuth: (server: Client.ServerMetadata) => Client.ClientAuth,
): Promise<Client.Configuration> {
  const template = templateOf(deps)
  const directory = directoryOf(connection)
  const base = template.replace('{tid}', directory)
  const server = (await getJson(
    deps,
    `${base}/.well-known/openid-configuration`,
  )) as unknown as Client.ServerMetadata
  const expected = MULTI.has(directory) ? template.replace('{tid}', '{tenantid}') : base
  if (server.issuer !== expected) {
    throw new Error(`the discovery document names the issuer ${server.issuer}, not ${expected}`)
  }
  const configuration = new lib.Configuration(
    server,
    connection.clientId,
    undefined,
    clientAuth(server),
  )
  const fetch = egressClientFetch(deps)
  configuration[lib.customFetch] = async (url, options) => {
    const response = await fetch(url, options)
    if (url !== server.token_endpoint || !response.ok) return response
    const body = (await response.json()) as Record<string, unknown>
    body[ASIDE] = body.id_token
    delete body.id_token
    return new Response(JSON.stringify(body), {
      status: response.status,
      headers: { 'content-type': 'application/json' },
    })
  }
  if (
    new URL(server.issuer.replace('{tenantid}', 'x')).protocol === 'http:' &&
    deps.config.webhookAllowPrivate
  ) {
    lib.allowInsecureRequests(configuration)
  }
  return configuration
}

const keySets = new WeakMap<Client.Configuration, { at: number; keys: Promise<JSONWebKeySet> }>()

function keysOf(deps: Pick<Deps, 'config'>, configuration: Client.Configuration) {
  const known = keySets.get(configuration)
  if (known && Date.now() - known.at < JWKS_TTL_MS) return known.keys
  const uri = configuration.serverMetadata().jwks_uri
  if (!uri) throw new Error('the discovery document names no jwks_uri')
  const keys = getJson(deps, uri) as unknown as Promise<JSONWebKeySet>
  keySets.set(configuration, { at: Date.now(), keys })
  keys.catch(() => keySets.delete(configuration))
  return keys
}

/**
 * The identity of the token response `tokens`: its ID token verified (signature, audience,
 * expiry, the nonce of this sign-in's state), its issuer the one its `tid` makes, its `tid` the
 * connection's directory when it names one.
 */
export async function microsoftProfile(
  deps: Pick<Deps, 'config'>,
  configuration: Client.Configuration,
  connection: SocialConnection,
  tokens: Record<string, unknown>,
  nonce: string,
): Promise<Profile> {
  const idToken = tokens[ASIDE]
  if (typeof idToken !== 'string') throw new Error('no ID token')
  const keys = createLocalJWKSet(await keysOf(deps, configuration))
  const { payload } = await jwtVerify(idToken, keys, {
    audience: connection.clientId,
    algorithms: ['RS256'],
    requiredClaims: ['iss', 'sub', 'tid', 'exp', 'iat'],
  })
  const tid = payload.tid
  if (typeof tid !== 'string' || !GUID.test(tid))
    throw new Error('the ID token has no directory id')
  const directory = directoryOf(connection)
  if (!MULTI.has(directory) && tid !== directory) {
    throw new Error(`the ID token is from directory ${tid}, not ${directory}`)
  }
  const issuer = templateOf(deps).replace('{tid}', tid)
  if (payload.iss !== issuer)
    throw new Error(`the ID token's issuer is ${payload.iss}, not ${issuer}`)
  if (payload.nonce !== nonce) throw new Error('the ID token is for another sign-in (nonce)')
  if (typeof payload.sub !== 'string') throw new ProfileError('the provider answered no id')
  const edov = payload.xms_edov
  const verified =
    edov === true || edov === 1 || edov === '1' || edov === 'true' || tid === CONSUMERS
  return oidcProfile({ ...payload, email_verified: verified }, payload.amr)
}
