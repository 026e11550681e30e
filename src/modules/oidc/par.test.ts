// Pushed authorization requests (RFC 9126; CONTRACT §22): the PAR endpoint in discovery and
// working with a real client (openid-client's buildAuthorizationUrlWithPAR) through the
// hosted pages to tokens; an application with requirePushedAuthorizationRequests refuses a
// plain authorization request (redirected back with invalid_request, nothing stored); the
// field in the applications API, its bad values 400 with nothing changed.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { before, test } from 'node:test'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
import { expectValidation } from '../../../test/envelope.ts'
import {
  createApplication,
  grantThroughPages,
  issuerOf,
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
import { PageClient } from '../../../test/web/page-client.ts'

const REDIRECT = 'https://app.example.com/callback'
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' // RFC 7636 Appendix B

let server: TestServer
let t: TenantFixture

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

async function parApp() {
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Pushed',
    type: 'web',
    redirectUris: [REDIRECT],
    requirePushedAuthorizationRequests: true,
  })
  return { ...made.application, clientSecret: made.clientSecret as string }
}

async function signedInBrowser() {
  const who = await signup(server, t.slug)
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  await browser.post(`/t/${t.slug}/sign-in`, { email: who.email, password: who.password })
  return { who, browser }
}

test('applications: requirePushedAuthorizationRequests is false by default, shown in the record, set on creation and by PATCH', async () => {
  const plain = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Plain',
    type: 'web',
    redirectUris: [REDIRECT],
  })
  const record = plain.application as Record<string, unknown>
  assert.equal(record.requirePushedAuthorizationRequests, false)
  assert.equal(record.tokenEndpointAuthMethod, 'client_secret_basic')
  const app = await parApp()
  const got = await server.request('GET', `/v1/${t.slug}/applications/${app.id}`, undefined, {
    token: t.admin.accessToken,
  })
  assert.equal(got.body.application.requirePushedAuthorizationRequests, true)
  const patched = await server.request(
    'PATCH',
    `/v1/${t.slug}/applications/${plain.application.id}`,
    { requirePushedAuthorizationRequests: true },
    { token: t.admin.accessToken },
  )
  assert.equal(patched.status, 200)
  assert.equal(patched.body.application.requirePushedAuthorizationRequests, true)
})

test('PAR: a pushed request (RFC 9126) leads through the hosted pages to tokens for the signed-in user', async () => {
  const app = await parApp()
  const { who, browser } = await signedInBrowser()
  const tokens = await grantThroughPages(
    server,
    t.slug,
    browser,
    { clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: REDIRECT },
    {},
    { par: true },
  )
  assert.equal(tokens.claims()?.sub, who.user.id)
  assert.equal(tokens.claims()?.iss, issuerOf(server, t.slug))
})

test('PAR rule: an application with requirePushedAuthorizationRequests refuses a plain authorization request (invalid_request back to the app), nothing stored', async () => {
  const app = await parApp()
  const state = randomBytes(8).toString('hex')
  const query = new URLSearchParams({
    client_id: app.clientId,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state,
  })
  const res = await unchanged(server, t.tenantId, () =>
    fetch(`${server.url}/oidc/${t.slug}/auth?${query}`, { redirect: 'manual' }),
  )
  assert.equal(res.status, 303)
  const back = new URL(res.headers.get('location') as string)
  assert.equal(back.origin + back.pathname, REDIRECT)
  assert.equal(back.searchParams.get('error'), 'invalid_request')
  assert.equal(back.searchParams.get('state'), state)
  assert.equal(back.searchParams.get('iss'), issuerOf(server, t.slug))
})

test('PAR: the push authenticates the client and checks the request; a wrong secret or an unregistered redirect URI is refused, nothing stored', async () => {
  const app = await parApp()
  const wrong = await oidcClient(server, t.slug, app.clientId, `${app.clientSecret}x`)
  const refused = await unchanged(server, t.tenantId, () =>
    oauthError(
      client.buildAuthorizationUrlWithPAR(wrong, { redirect_uri: REDIRECT, scope: 'openid' }),
    ),
  )
  assert.deepEqual(refused, { error: 'invalid_client', status: 401 })
  const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  const elsewhere = await unchanged(server, t.tenantId, () =>
    oauthError(
      client.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: 'https://evil.example.com/callback',
        scope: 'openid',
      }),
    ),
  )
  // oidc-provider's answer: 400 invalid_request ("redirect_uri did not match any of the
  // client's registered redirect_uris"), never a redirect to the URI.
  assert.deepEqual(elsewhere, { error: 'invalid_request', status: 400 })
})

test('applications: requirePushedAuthorizationRequests on a machine app, or not a boolean, is 400 validation and changes nothing', async () => {
  for (const body of [
    { name: 'job', type: 'machine', requirePushedAuthorizationRequests: true },
    {
      name: 'web',
      type: 'web',
      redirectUris: [REDIRECT],
      requirePushedAuthorizationRequests: 'yes',
    },
  ]) {
    const res = await unchanged(server, t.tenantId, () =>
      server.request('POST', `/v1/${t.slug}/applications`, body, { token: t.admin.accessToken }),
    )
    expectValidation(res)
  }
})
