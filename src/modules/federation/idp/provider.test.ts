// Finding the provider (CONTRACT §1): OpenID discovery from IDP_ISSUER, cached and fetched
// again after a failure; or the explicit endpoints of a plain OAuth 2.0 provider.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { expectError } from '../../../../test/envelope.ts'
import {
  callbackPath,
  connectedTenant,
  discoveryConfig,
  identitiesOf,
  newAccount,
  roundTrip,
  signIn,
  startUrl,
} from '../../../../test/fixtures/oauth.ts'
import { startServer, type TestServer } from '../../../../test/helpers.ts'
import { type OidcProviderFixture, startOidcProvider } from '../../../../test/oidc-provider.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

async function setUp(
  idpOptions: Parameters<typeof startOidcProvider>[0] = {},
  config: (issuer: string) => Parameters<typeof startServer>[0] = (issuer) => ({
    idp: discoveryConfig(issuer),
  }),
): Promise<{ server: TestServer; idp: OidcProviderFixture }> {
  const idp = await startOidcProvider(idpOptions)
  const server = await startServer(config(idp.issuer))
  cleanup.push(
    () => idp.close(),
    () => server.close(),
  )
  return { server, idp }
}

const DISCOVERY = '/.well-known/openid-configuration'
const discoveries = (idp: OidcProviderFixture) =>
  idp.requests.filter((r) => r.path === DISCOVERY).length

test('discovery is cached: several sign-ins and tenants, one discovery request', async () => {
  const { server, idp } = await setUp()
  const a = await connectedTenant(server, idp)
  const b = await connectedTenant(server, idp)
  for (const t of [a, b, a]) {
    const res = await signIn(server, idp, t.slug, newAccount())
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  assert.equal(discoveries(idp), 1)
})

test('a provider that cannot be reached at start answers 503, and is found once it is back', async () => {
  const { server, idp } = await setUp()
  const t = await connectedTenant(server, idp)
  await idp.pause()
  const down = await server.request('GET', `/v1/${t.slug}/oauth/idp/start`)
  expectError(down, 503, 'unavailable')
  await idp.resume()
  const res = await signIn(server, idp, t.slug, newAccount())
  assert.equal(res.status, 200, JSON.stringify(res.body))
})

test('a failed exchange forgets the cached discovery, and the next sign-in discovers again', async () => {
  const { server, idp } = await setUp()
  const t = await connectedTenant(server, idp)
  assert.equal((await signIn(server, idp, t.slug, newAccount())).status, 200)
  assert.equal(discoveries(idp), 1)
  const back = await roundTrip(server, idp, t.slug, newAccount())
  await idp.pause()
  expectError(await server.request('GET', callbackPath(back)), 401, 'idp_exchange_failed')
  await idp.resume()
  assert.equal((await signIn(server, idp, t.slug, newAccount())).status, 200)
  assert.equal(discoveries(idp), 2)
})

test('an email kept at userinfo (not in the ID token) is read from there', async () => {
  const { server, idp } = await setUp({ emailInIdToken: false })
  const t = await connectedTenant(server, idp)
  const account = newAccount()
  const res = await signIn(server, idp, t.slug, account)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.user.email, account.email)
  assert.equal(res.body.user.emailVerified, true)
  assert.ok(idp.requests.some((r) => r.path === '/me'))
})

test('openid is always requested from an OpenID provider, whatever IDP_SCOPES says', async () => {
  const { server, idp } = await setUp({}, (issuer) => ({
    idp: discoveryConfig(issuer, 'email profile'),
  }))
  const t = await connectedTenant(server, idp)
  const url = await startUrl(server, t.slug)
  assert.deepEqual(url.searchParams.get('scope')?.split(' '), ['openid', 'email', 'profile'])
})

test('a plain OAuth 2.0 provider (explicit endpoints): identity from userinfo, keyed by its origin', async () => {
  const { server, idp } = await setUp({}, (issuer) => ({
    idp: {
      issuer: undefined,
      authorizationUrl: `${issuer}/auth`,
      tokenUrl: `${issuer}/token`,
      userinfoUrl: `${issuer}/me`,
      scopes: 'openid email',
    },
  }))
  const t = await connectedTenant(server, idp)
  const url = await startUrl(server, t.slug)
  assert.equal(url.origin + url.pathname, `${idp.issuer}/auth`)
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256')
  const account = newAccount()
  const back = await idp.authorize(url.href, account)
  const res = await server.request('GET', callbackPath(back))
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.user.email, account.email)
  assert.equal(discoveries(idp), 0)
  const links = await identitiesOf(server, t.tenantId)
  assert.equal(links[0].issuer, new URL(idp.issuer).origin)
  assert.equal(links[0].subject, account.sub)
  // The same identity comes back to the same user.
  const again = await signIn(server, idp, t.slug, account)
  assert.equal(again.body.user.id, res.body.user.id)
})
