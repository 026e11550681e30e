// Dynamic client registration (CONTRACT §11; RFC 7591), open per tenant while its
// `dynamicClientRegistration` setting is on. Every tenant's Provider is built with
// oidc-provider's registration feature on (providers are pooled on every instance, so a
// setting cannot be built into them); each request decides instead: the routes admit the
// request when its tenant (read per request, as every tenant setting) has the setting on,
// and `registrationGate`, the Provider's first middleware, lets only an admitted request
// reach the registration endpoint and leaves `registration_endpoint` out of discovery
// otherwise. A refused request gets exactly what oidc-provider answers at a path it does
// not serve (404 "Not Found"), as when the feature is off.
//
// A registered client is an applications row of the tenant (dynamic, third-party, its
// secret sealed like an admin's application), written with its ApplicationCreated audit
// in one transaction when oidc-provider stores the client (adapter.ts, model Client), so
// it is listed, edited and deleted through the admin API like any other. RFC 7592
// (reading, updating and deleting one's own registration) is not offered: no registration
// access token is issued.
import type { IncomingMessage } from 'node:http'
// @ts-expect-error: oidc-provider ships no type declarations.
import { Provider } from 'oidc-provider'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { type FieldCipher, randomToken } from '../../lib/crypto.ts'
import { type Jwks, NO_CLIENT_AUTH } from '../applications/client-auth.ts'
import type { TokenEndpointAuthMethod } from '../applications/schemas.ts'
import { newSecret } from '../applications/secret.ts'
import { insertAudited } from '../applications/service.ts'
import type { Actor, AuditRecorder } from '../audit/recorder.ts'
import { registeredType, registrationMetadata } from './registration-metadata.ts'

/** oidc-provider's registration route, under the issuer. */
export const REGISTRATION_PATH = '/reg'
const DISCOVERY_PATH = '/.well-known/openid-configuration'

/** The requests whose tenant has registration open, with who is asking (for the audit). */
const admitted = new WeakMap<IncomingMessage, Actor>()

/** Opens registration for this request: its tenant has `dynamicClientRegistration` on. */
export function admitRegistration(raw: IncomingMessage, actor: Actor): void {
  admitted.set(raw, actor)
}

/** oidc-provider's registration feature: client ids and secrets made as an admin's are. */
export function registrationFeature() {
  return {
    enabled: true,
    // 128 random bits, as an admin's application (applications/service.ts).
    idFactory: () => randomToken(16),
    secretFactory: () => newSecret(),
    // RFC 7592 stays off: without a registration access token a client cannot manage itself.
    issueRegistrationAccessToken: false,
  }
}

interface KoaContext {
  req: IncomingMessage & { body?: Buffer }
  method: string
  path: string
  status: number
  body: unknown
  is(type: string): string | false
  set(field: string, value: string): void
}

/** Applies the registration rules to the request's JSON; false when it was refused. */
function prepare(ctx: KoaContext): boolean {
  // What is no JSON object is left to oidc-provider, which refuses it (invalid_request).
  if (!ctx.is('application/json') || !ctx.req.body) return true
  let input: unknown
  try {
    input = JSON.parse(ctx.req.body.toString('utf8'))
  } catch {
    return true
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return true
  const checked = registrationMetadata(input as Record<string, unknown>)
  if ('refused' in checked) {
    // RFC 7591 §3.2.2.
    ctx.status = 400
    ctx.set('cache-control', 'no-store')
    ctx.body = checked.refused
    return false
  }
  // oidc-provider reads a body already read from `req.body` (routes.ts).
  ctx.req.body = Buffer.from(JSON.stringify(checked.metadata))
  return true
}

/** The Provider's first middleware (Provider#use): see the head of this file. */
export async function registrationGate(ctx: KoaContext, next: () => Promise<void>) {
  const open = admitted.has(ctx.req)
  if (ctx.path === REGISTRATION_PATH || ctx.path.startsWith(`${REGISTRATION_PATH}/`)) {
    // Koa's own answer to a path no route serves (status 404, "Not Found").
    if (!open) return
    if (ctx.method === 'POST' && ctx.path === REGISTRATION_PATH && !prepare(ctx)) return
    return next()
  }
  await next()
  if (!open && ctx.path === DISCOVERY_PATH && ctx.body && typeof ctx.body === 'object') {
    delete (ctx.body as Record<string, unknown>).registration_endpoint
  }
}

export interface RegistrationDeps {
  db: Db
  cipher: FieldCipher
  clock: Clock
  audit: AuditRecorder
}

/**
 * Stores a client oidc-provider has just registered (its adapter's upsert of model Client)
 * as an application of the tenant. Only an admitted registration request may: the adapter
 * writes no client otherwise.
 */
export async function storeRegisteredClient(
  deps: RegistrationDeps,
  tenantId: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  const ctx = Provider.ctx as { req: IncomingMessage } | undefined
  const actor = ctx && admitted.get(ctx.req)
  if (!actor) throw new Error('clients are the applications table')
  const type = registeredType(metadata.application_type, metadata.token_endpoint_auth_method)
  const secret = typeof metadata.client_secret === 'string' ? metadata.client_secret : undefined
  await insertAudited(deps, tenantId, actor, {
    clientId: String(metadata.client_id),
    name: String(metadata.client_name),
    type,
    redirectUris: metadata.redirect_uris as string[],
    postLogoutRedirectUris: (metadata.post_logout_redirect_uris as string[] | undefined) ?? [],
    backchannelLogoutUri: null,
    firstParty: false,
    allowedScopes: [],
    dynamic: true,
    secret,
    clientAuth: {
      ...NO_CLIENT_AUTH,
      tokenEndpointAuthMethod: metadata.token_endpoint_auth_method as TokenEndpointAuthMethod,
      jwks: (metadata.jwks as Jwks | undefined) ?? null,
      jwksUri: typeof metadata.jwks_uri === 'string' ? metadata.jwks_uri : null,
    },
  })
}
