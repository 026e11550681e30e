// Organization tokens from the provider (CONTRACT §18, Provider), over real HTTP with
// openid-client as the application and a browser without JavaScript on the hosted pages:
// an authorization with organization_id answers an access token with org_id and org_roles
// whose resource scopes are only those the member's organization roles list; a refresh with
// organization_id is cut the same way (without it: a plain token); a user who is not a member
// of that organization (another one of the tenant, another tenant's, an unknown id) gets
// access_denied with nothing issued, at the authorization and at the refresh (the refresh
// token not spent); a member removed gets no organization token at the next refresh; and an
// organization with mfaRequired asks the hosted pages for a second factor first.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
import { enrolTotp, totpAt } from '../../../test/fixtures/mfa.ts'
import {
  createApiResource,
  createApplication,
  oauthError,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { continuesTo, hiddenValue, PageClient, textOf } from '../../../test/web/page-client.ts'
import { and, asc, eq, inArray } from '../../db/orm.ts'
import { oidcModels } from '../../db/schema.ts'

const REDIRECT = 'https://app.example.com/callback'
const ORDERS = 'https://orders.example.com/api'

let server: TestServer
let t: TenantFixture
let other: TenantFixture
let app: { clientId: string; clientSecret: string; redirectUri: string }
let config: client.Configuration

const as = (tenant: TenantFixture) => async (method: string, path: string, body?: unknown) => {
  const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, {
    token: tenant.admin.accessToken,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
  await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Orders API',
    identifier: ORDERS,
    scopes: [
      { name: 'orders:read' },
      { name: 'orders:approve', roles: ['Admin'] },
      { name: 'orders:refund', roles: ['Admin'] },
    ],
  })
  const admin = as(t)
  await admin('POST', '/roles', {
    name: 'Approver',
    kind: 'organization',
    resourceScopes: [{ resource: ORDERS, scopes: ['orders:approve'] }],
  })
  await admin('POST', '/roles', {
    name: 'Refunder',
    kind: 'organization',
    resourceScopes: [{ resource: ORDERS, scopes: ['orders:refund'] }],
  })
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Order Desk',
    type: 'web',
    redirectUris: [REDIRECT],
  })
  app = {
    clientId: made.application.clientId,
    clientSecret: String(made.clientSecret),
    redirectUri: REDIRECT,
  }
  config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
})

const organization = async (tenant: TenantFixture, body: Record<string, unknown> = {}) =>
  (await as(tenant)('POST', '/organizations', { name: `Org ${randomIp()}`, ...body }))
    .organization as { id: string }

const join = (orgId: string, userId: string, roles: string[] = []) =>
  as(t)('PUT', `/organizations/${orgId}/members/${userId}`, { roles })

/** A browser signed in on the tenant's hosted pages. */
async function signedIn(who: { email: string; password: string }) {
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  const page = await browser.post(`/t/${t.slug}/sign-in`, {
    email: who.email,
    password: who.password,
  })
  assert.match(page.url, /\/account$/)
  return browser
}

interface Authorization {
  verifier: string
  state: string
  nonce: string
  url: string
}

/** The application's authorization request (code + PKCE), as a URL the browser opens. */
async function request(params: Record<string, string>, resource = true): Promise<Authorization> {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid offline_access orders:read orders:approve orders:refund',
    ...(resource ? { resource: ORDERS } : {}),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  }).href
  return { verifier, state, nonce, url }
}

/**
 * Follows the browser through the authorization until the application's redirect URI (the
 * URL answered); `onPage` answers a hosted page that is not a redirect with the next URL.
 */
async function drive(
  browser: PageClient,
  url: string,
  onPage: (html: string, url: string) => Promise<string> = async (html) =>
    assert.fail(`an unexpected page: ${textOf(html).slice(0, 300)}`),
): Promise<URL> {
  const publicUrl = server.deps.config.publicUrl
  const local = (href: string) =>
    href.startsWith(publicUrl) ? server.url + href.slice(publicUrl.length) : href
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(REDIRECT)) return new URL(url)
    const res = await browser.once('GET', local(url))
    const location = res.headers.get('location')
    url = location ? new URL(location, local(url)).href : await onPage(await res.text(), url)
  }
  assert.fail('the authorization did not reach the application')
}

const exchange = (asked: Authorization, back: URL) =>
  client.authorizationCodeGrant(config, back, {
    pkceCodeVerifier: asked.verifier,
    expectedState: asked.state,
    expectedNonce: asked.nonce,
    idTokenExpected: true,
  })

/** The tenant's grants, codes and tokens (what an authorization or a refresh issues). */
const issued = (tenantId: string) =>
  server.deps.db
    .select({ model: oidcModels.model, id: oidcModels.id, consumedAt: oidcModels.consumedAt })
    .from(oidcModels)
    .where(
      and(
        eq(oidcModels.tenantId, tenantId),
        inArray(oidcModels.model, ['Grant', 'AuthorizationCode', 'AccessToken', 'RefreshToken']),
      ),
    )
    .orderBy(asc(oidcModels.model), asc(oidcModels.id))

test('organization_id: the access token carries org_id and org_roles and only the scopes the organization roles list, at the code and each refresh', async () => {
  const a = await organization(t)
  const b = await organization(t)
  const who = await signup(server, t.slug)
  await join(a.id, who.user.id, ['Approver'])
  await join(b.id, who.user.id, ['Refunder'])
  const browser = await signedIn(who)

  const asked = await request({ organization_id: a.id })
  const tokens = await exchange(asked, await drive(browser, asked.url))
  const access = decodeJwt(tokens.access_token)
  assert.equal(access.org_id, a.id)
  assert.deepEqual(access.org_roles, ['Approver'])
  assert.equal(access.aud, ORDERS)
  assert.equal(access.sub, who.user.id)
  // The organization roles' scopes alone: orders:read (every Member's) is not among them.
  assert.equal(access.scope, 'orders:approve')
  assert.equal(tokens.scope, 'orders:approve')
  const refreshToken = String(tokens.refresh_token)

  // A refresh for the organization: the same cut, read again.
  const again = await client.refreshTokenGrant(config, refreshToken, {
    resource: ORDERS,
    organization_id: a.id,
  })
  assert.equal(decodeJwt(again.access_token).org_id, a.id)
  assert.equal(decodeJwt(again.access_token).scope, 'orders:approve')
  // Another organization of the member's, asked at a refresh: its roles' scopes.
  const inB = await client.refreshTokenGrant(config, String(again.refresh_token), {
    resource: ORDERS,
    organization_id: b.id,
  })
  const bAccess = decodeJwt(inB.access_token)
  assert.equal(bAccess.org_id, b.id)
  assert.deepEqual(bAccess.org_roles, ['Refunder'])
  assert.equal(bAccess.scope, 'orders:refund')
  // The refresh token stays the user's: without organization_id, a plain token with the
  // user's own scopes (a Member's orders:read).
  const plain = await client.refreshTokenGrant(config, String(inB.refresh_token), {
    resource: ORDERS,
  })
  const plainAccess = decodeJwt(plain.access_token)
  assert.equal(plainAccess.org_id, undefined)
  assert.equal(plainAccess.org_roles, undefined)
  assert.equal(plainAccess.scope, 'orders:read')
  // A role's scopes are data read at each issue: given Refunder in A, the next token has both.
  await join(a.id, who.user.id, ['Approver', 'Refunder'])
  const more = await client.refreshTokenGrant(config, String(plain.refresh_token), {
    resource: ORDERS,
    organization_id: a.id,
  })
  assert.equal(decodeJwt(more.access_token).scope, 'orders:approve orders:refund')
  assert.deepEqual(decodeJwt(more.access_token).org_roles, ['Approver', 'Refunder'])
  // `scope` at the refresh narrows within them.
  const narrowed = await client.refreshTokenGrant(config, String(more.refresh_token), {
    resource: ORDERS,
    organization_id: a.id,
    scope: 'orders:refund',
  })
  assert.equal(decodeJwt(narrowed.access_token).scope, 'orders:refund')

  // Without a resource the access token is opaque: introspection answers org_id.
  const bare = await request({ organization_id: a.id, scope: 'openid offline_access' }, false)
  const opaque = await exchange(bare, await drive(browser, bare.url))
  const seen = await client.tokenIntrospection(config, opaque.access_token)
  assert.equal(seen.active, true)
  assert.equal(seen.org_id, a.id)
  assert.deepEqual(seen.org_roles, ['Approver', 'Refunder'])
})

test('a user who is no member of the organization, of this tenant or another, gets access_denied at the authorization, nothing issued', async () => {
  const mine = await organization(t)
  const notMine = await organization(t)
  const elsewhere = await organization(other)
  const who = await signup(server, t.slug)
  await join(mine.id, who.user.id)
  const browser = await signedIn(who)
  // A first authorization signs the provider in (its session), so the next ones are refused
  // at once, from the provider session alone.
  const first = await request({ organization_id: mine.id })
  assert.ok((await drive(browser, first.url)).searchParams.get('code'))
  for (const id of [notMine.id, elsewhere.id, crypto.randomUUID(), 'not-a-uuid']) {
    const asked = await request({ organization_id: id })
    const before = [await issued(t.tenantId), await issued(other.tenantId)]
    const back = await drive(browser, asked.url)
    assert.deepEqual([await issued(t.tenantId), await issued(other.tenantId)], before, id)
    assert.equal(back.searchParams.get('error'), 'access_denied', id)
    assert.equal(back.searchParams.get('state'), asked.state)
    assert.equal(back.searchParams.get('iss'), config.serverMetadata().issuer)
    assert.equal(back.searchParams.get('code'), null)
  }

  // In a fresh browser the sign-in comes first, then the refusal: no grant, code or token.
  const fresh = await signedIn(who)
  const before = await issued(t.tenantId)
  const asked = await request({ organization_id: notMine.id })
  const back = await drive(fresh, asked.url)
  assert.equal(back.searchParams.get('error'), 'access_denied')
  assert.deepEqual(await issued(t.tenantId), before)
})

test('a refresh for an organization the user is no member of is access_denied and spends nothing; a member removed gets no organization token', async () => {
  const a = await organization(t)
  const b = await organization(t)
  const elsewhere = await organization(other)
  const who = await signup(server, t.slug)
  await join(a.id, who.user.id, ['Approver'])
  const browser = await signedIn(who)
  const asked = await request({})
  const tokens = await exchange(asked, await drive(browser, asked.url))
  // A plain authorization: the user's own scopes, no organization.
  assert.equal(decodeJwt(tokens.access_token).scope, 'orders:read')
  assert.equal(decodeJwt(tokens.access_token).org_id, undefined)
  const refreshToken = String(tokens.refresh_token)

  for (const id of [b.id, elsewhere.id, crypto.randomUUID(), 'not-a-uuid']) {
    const refused = await unchanged(server, [t.tenantId, other.tenantId], () =>
      oauthError(
        client.refreshTokenGrant(config, refreshToken, { resource: ORDERS, organization_id: id }),
      ),
    )
    assert.deepEqual(refused, { error: 'access_denied', status: 400 }, id)
  }
  // The refresh token was not spent: the member's organization token comes from it, with the
  // scope the grant made for a plain authorization holds through the organization role.
  const inA = await client.refreshTokenGrant(config, refreshToken, {
    resource: ORDERS,
    organization_id: a.id,
  })
  assert.equal(decodeJwt(inA.access_token).org_id, a.id)
  assert.equal(decodeJwt(inA.access_token).scope, 'orders:approve')

  await as(t)('DELETE', `/organizations/${a.id}/members/${who.user.id}`)
  const gone = await unchanged(server, t.tenantId, () =>
    oauthError(
      client.refreshTokenGrant(config, String(inA.refresh_token), {
        resource: ORDERS,
        organization_id: a.id,
      }),
    ),
  )
  assert.equal(gone.error, 'access_denied')
  // A plain refresh still works.
  const plain = await client.refreshTokenGrant(config, String(inA.refresh_token), {
    resource: ORDERS,
  })
  assert.equal(decodeJwt(plain.access_token).scope, 'orders:read')
})

test('the device flow takes no organization_id (invalid_request)', async () => {
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Order Kiosk',
    type: 'native',
    redirectUris: ['com.example.kiosk:/callback'],
  })
  const kiosk = await oidcClient(server, t.slug, made.application.clientId)
  const org = await organization(t)
  const refused = await unchanged(server, t.tenantId, () =>
    oauthError(
      client.initiateDeviceAuthorization(kiosk, { scope: 'openid', organization_id: org.id }),
    ),
  )
  assert.deepEqual(refused, { error: 'invalid_request', status: 400 })
})

test('mfaRequired: a session without a second factor is asked for one on the hosted pages (prompt=none: interaction_required); proved, the organization token is issued', async () => {
  await as(t)('PATCH', '/tenant', { mfaPolicy: 'Optional' })
  const org = await organization(t, { mfaRequired: true })
  const who = await signup(server, t.slug)
  await join(org.id, who.user.id, ['Approver'])
  // Signed in before the authenticator app was set up: the session proved no second factor.
  const browser = await signedIn(who)
  const secret = await enrolTotp(server, t.slug, who.accessToken)
  const first = await request({})
  await exchange(first, await drive(browser, first.url))

  const silent = await request({ organization_id: org.id, prompt: 'none' })
  const issuedBefore = await issued(t.tenantId)
  const back = await drive(browser, silent.url)
  assert.equal(back.searchParams.get('error'), 'interaction_required')
  assert.deepEqual(await issued(t.tenantId), issuedBefore)
  // A refresh for the organization: the grant's sign-in proved no second factor.
  const plain = await request({})
  const tokens = await exchange(plain, await drive(browser, plain.url))
  const refused = await unchanged(server, t.tenantId, () =>
    oauthError(
      client.refreshTokenGrant(config, String(tokens.refresh_token), {
        resource: ORDERS,
        organization_id: org.id,
      }),
    ),
  )
  assert.equal(refused.error, 'access_denied')

  const asked = await request({ organization_id: org.id })
  let shown = ''
  const answered = await drive(browser, asked.url, async (html, url) => {
    if (html.includes('name="totpCode"')) {
      shown = textOf(html)
      const action = /<form method="post" action="([^"]+\/second-factor)"/.exec(html)?.[1]
      assert.ok(action, 'the second-factor form')
      // A wrong code first: the page again, with the error.
      const wrong = await browser.post(action.replaceAll('&amp;', '&'), {
        _csrf: hiddenValue(html, '_csrf') ?? '',
        method: 'totp',
        totpCode: '000000',
      })
      assert.equal(wrong.status, 401)
      assert.match(wrong.html, /name="totpCode"/)
      const page = await browser.post(action.replaceAll('&amp;', '&'), {
        method: 'totp',
        totpCode: totpAt(server, secret),
      })
      const next = continuesTo(page.html)
      assert.ok(next, `the way on: ${textOf(page.html).slice(0, 200)}`)
      return new URL(next, url).href
    }
    return assert.fail(`an unexpected page: ${textOf(html).slice(0, 300)}`)
  })
  assert.match(shown, /asks for a second factor before Order Desk may use your account there/)
  const granted = await exchange(asked, answered)
  assert.equal(decodeJwt(granted.access_token).org_id, org.id)
  assert.equal(decodeJwt(granted.access_token).scope, 'orders:approve')
  // The session proved one now: prompt=none and the refresh for the organization work.
  const quiet = await request({ organization_id: org.id, prompt: 'none' })
  assert.ok((await drive(browser, quiet.url)).searchParams.get('code'))
  const refreshed = await client.refreshTokenGrant(config, String(granted.refresh_token), {
    resource: ORDERS,
    organization_id: org.id,
  })
  assert.equal(decodeJwt(refreshed.access_token).org_id, org.id)
})
