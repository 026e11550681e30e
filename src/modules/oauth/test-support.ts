// Shared by the oauth tests (test-only; nothing in the service imports this): a service
// and a real OpenID provider on loopback, tenants connected to it through the API, and
// the browser's part of the round trip.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { and, eq, sql } from 'drizzle-orm'
import {
  createTenant,
  type Response,
  startServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import {
  type IdpAccount,
  type IdpClient,
  type OidcProviderFixture,
  type OidcProviderOptions,
  startOidcProvider,
} from '../../../test/oidc-provider.ts'
import type { IdpConfig } from '../../config.ts'
import { apiKeys, idpIdentities, oauthStates, sessions, tenants, users } from '../../db/schema.ts'
import { hashToken, randomToken } from '../../lib/crypto.ts'

export function discoveryConfig(issuer: string, scopes = 'openid email profile'): IdpConfig {
  return {
    issuer,
    authorizationUrl: undefined,
    tokenUrl: undefined,
    userinfoUrl: undefined,
    scopes,
  }
}

export async function startWithProvider(
  options: OidcProviderOptions = {},
): Promise<{ server: TestServer; idp: OidcProviderFixture }> {
  const idp = await startOidcProvider(options)
  const server = await startServer({ idp: discoveryConfig(idp.issuer) })
  return { server, idp }
}

export interface ConnectedTenant extends TenantFixture {
  client: IdpClient
}

/** A new tenant whose admin stores a client of `idp` through PUT oauth/idp/credentials. */
export async function connectedTenant(
  server: TestServer,
  idp: OidcProviderFixture,
): Promise<ConnectedTenant> {
  const tenant = await createTenant(server)
  const client = await idp.addClient(redirectUriOf(server, tenant.slug))
  const res = await server.request('PUT', `/v1/${tenant.slug}/oauth/idp/credentials`, client, {
    token: tenant.admin.accessToken,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return { ...tenant, client }
}

export function redirectUriOf(server: TestServer, slug: string): string {
  return `${server.deps.config.publicUrl}/v1/${slug}/oauth/idp/callback`
}

export async function startUrl(server: TestServer, slug: string): Promise<URL> {
  const res = await server.request('GET', `/v1/${slug}/oauth/idp/start`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return new URL(res.body.authorizationUrl)
}

/** The path and query the browser would request on the service. */
export function callbackPath(url: URL): string {
  return url.pathname + url.search
}

/** start → the provider (signed in as `account`) → the URL it sends the browser back to. */
export async function roundTrip(
  server: TestServer,
  idp: OidcProviderFixture,
  slug: string,
  account: IdpAccount,
): Promise<URL> {
  return idp.authorize((await startUrl(server, slug)).href, account)
}

/** The whole sign-in: the callback's answer. */
export async function signIn(
  server: TestServer,
  idp: OidcProviderFixture,
  slug: string,
  account: IdpAccount,
  ip?: string,
): Promise<Response> {
  const back = await roundTrip(server, idp, slug, account)
  return server.request('GET', callbackPath(back), undefined, { ip })
}

export function newAccount(overrides: Partial<IdpAccount> = {}): IdpAccount {
  return {
    sub: `sub-${randomBytes(6).toString('hex')}`,
    email: uniqueEmail('idp'),
    email_verified: true,
    ...overrides,
  }
}

/** What a refused callback must leave unchanged. */
export async function snapshot(server: TestServer, tenantId: string) {
  const db = server.deps.db
  const count = async (table: typeof users | typeof sessions | typeof idpIdentities) => {
    const rows = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(table)
      .where(eq(table.tenantId, tenantId))
    return rows[0].n
  }
  return {
    users: await count(users),
    sessions: await count(sessions),
    identities: await count(idpIdentities),
  }
}

export async function identitiesOf(server: TestServer, tenantId: string) {
  return server.deps.db.select().from(idpIdentities).where(eq(idpIdentities.tenantId, tenantId))
}

export async function tenantRow(server: TestServer, tenantId: string) {
  const rows = await server.deps.db.select().from(tenants).where(eq(tenants.id, tenantId))
  return rows[0]
}

export async function userRow(server: TestServer, tenantId: string, userId: string) {
  const rows = await server.deps.db
    .select()
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
  return rows[0]
}

export async function stateRow(server: TestServer, tenantId: string, state: string) {
  const rows = await server.deps.db
    .select()
    .from(oauthStates)
    .where(and(eq(oauthStates.tenantId, tenantId), eq(oauthStates.stateHash, hashToken(state))))
  return rows[0]
}

/** Stores an API key the way POST api-keys does (only its hash); answers the plaintext. */
export async function insertApiKey(server: TestServer, tenantId: string): Promise<string> {
  const plaintext = `ak_live_${randomToken()}`
  await server.deps.db.insert(apiKeys).values({
    tenantId,
    id: randomUUID(),
    name: 'oauth test key',
    environment: 'live',
    prefix: plaintext.slice(0, 12),
    keyHash: hashToken(plaintext),
    createdAt: new Date(),
  })
  return plaintext
}

/** Asserts the error envelope of CONTRACT §3 with its status and reason. */
export function assertError(res: Response, status: number, reason: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body))
  assert.equal(typeof res.body.code, 'string')
  assert.equal(typeof res.body.message, 'string')
  assert.equal(res.body.details?.reason, reason, JSON.stringify(res.body))
}
