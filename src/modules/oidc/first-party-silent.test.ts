// A first-party application is pre-configured consent (CONTRACT §11, OIDC Core §3.1.2.1;
// issue 36): prompt=none into one the user has not used yet, with a live hosted session,
// is granted without the interaction page (express-openid-connect's attemptSilentLogin,
// oidc-client-ts's signinSilent), resource scopes cut to the user's role as ever.
// A third-party one still answers consent_required, and without a session login_required.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import {
  createApiResource,
  createApplication,
  grantThroughPages,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import { createTenant, randomIp, signup, startTestServer } from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

test('prompt=none into a first-party application not used before: the code at once, resource scopes within the role; a third-party one: consent_required', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const admin = tenant.admin.accessToken
  const api = await createApiResource(server, tenant.slug, admin, {
    name: 'Notes API',
    identifier: 'https://notes.example.com/api',
    scopes: [{ name: 'notes:read' }, { name: 'notes:admin', roles: ['Admin'] }],
  })
  const app = async (firstParty: boolean) => {
    const made = await createApplication(server, tenant.slug, admin, {
      name: firstParty ? 'Team Notes' : 'Gadget Planner',
      type: 'web',
      redirectUris: [REDIRECT],
      firstParty,
    })
    return { clientId: made.application.clientId, clientSecret: String(made.clientSecret) }
  }
  const [used, first, third] = [await app(true), await app(true), await app(false)]
  const who = await signup(server, tenant.slug)

  /** One silent authorization in `browser`: where the provider sends the browser back. */
  const silent = async (browser: PageClient, made: typeof first) => {
    const config = await oidcClient(server, tenant.slug, made.clientId, made.clientSecret)
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const nonce = client.randomNonce()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email notes:read notes:admin',
      resource: api.identifier,
      prompt: 'none',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    let at = url.href.replace(server.deps.config.publicUrl, server.url)
    for (let hop = 0; hop < 6 && !at.startsWith(REDIRECT); hop++) {
      const res = await browser.once('GET', at)
      const location = res.headers.get('location')
      assert.ok(location, `no redirect from ${new URL(at).pathname}: ${res.status}`)
      assert.doesNotMatch(location, /\/authorize\//, 'went to the interaction page')
      at = new URL(location, at).href.replace(server.deps.config.publicUrl, server.url)
    }
    assert.ok(at.startsWith(REDIRECT), at)
    return { config, back: new URL(at), verifier, state, nonce }
  }

  // Without a hosted session: login_required, for the first-party application too.
  const stranger = await silent(new PageClient(server, randomIp()), first)
  assert.equal(stranger.back.searchParams.get('error'), 'login_required')

  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${tenant.slug}/sign-in`)
  await browser.post(`/t/${tenant.slug}/sign-in`, { email: who.email, password: who.password })
  // The provider's own session: one application signed in to through the pages.
  await grantThroughPages(server, tenant.slug, browser, { ...used, redirectUri: REDIRECT })

  const granted = await silent(browser, first)
  assert.equal(granted.back.searchParams.get('error'), null, granted.back.href)
  const tokens = await client.authorizationCodeGrant(granted.config, granted.back, {
    pkceCodeVerifier: granted.verifier,
    expectedState: granted.state,
    expectedNonce: granted.nonce,
    idTokenExpected: true,
  })
  assert.equal(tokens.claims()?.sub, who.user.id)
  // A Member: the Admin-only scope is left out.
  assert.equal(decodeJwt(tokens.access_token).scope, 'notes:read')

  // The third-party application still asks the person.
  const refused = await silent(browser, third)
  assert.equal(refused.back.searchParams.get('error'), 'consent_required')
  const grants = await server.request('GET', `/v1/${tenant.slug}/me/applications`, undefined, {
    token: (
      await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
        email: who.email,
        password: who.password,
      })
    ).body.accessToken,
  })
  // Granted once each (the order of two grants of one second is not asserted).
  assert.deepEqual(
    grants.body.items.map((i: { clientId: string }) => i.clientId).sort(),
    [first.clientId, used.clientId].sort(),
  )
})
