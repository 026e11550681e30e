// The UserLogin row of a sign-in that serves an OpenID application carries its client id
// (CONTRACT §11, Sign-in): the hosted pages name the application to the API in the
// process (lib/served-client.ts), so a caller from outside cannot name one. A sign-in on
// the hosted pages alone has none; SSO (a live page session reused) is no new sign-in and
// writes no row. Over HTTP, with a browser without JavaScript.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import * as client from 'openid-client'
import { createApplication, grantThroughPages, oidcClient } from '../fixtures/oidc.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'
import { PageClient } from './page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

let server: TestServer

before(async (ctx) => {
  server = await startTestServer(ctx)
})

async function logins(t: TenantFixture) {
  const res = await server.request('GET', `/v1/${t.slug}/audit?action=UserLogin`, undefined, {
    token: t.admin.accessToken,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items as { userId: string; metadata: Record<string, unknown> }[]
}

async function withApplication() {
  const t = await createTenant(server)
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Gadget Planner',
    type: 'web',
    redirectUris: [REDIRECT],
    firstParty: true,
  })
  const app = {
    clientId: made.application.clientId,
    clientSecret: String(made.clientSecret),
    redirectUri: REDIRECT,
  }
  return { t, app }
}

describe('UserLogin of a sign-in that serves an application', () => {
  test('carries metadata.clientId; the SSO that follows writes no second row', async () => {
    const { t, app } = await withApplication()
    const user = await signup(server, t.slug)
    const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
    const authorize = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: client.randomState(),
    })
    const browser = new PageClient(server, randomIp())
    const publicUrl = server.deps.config.publicUrl
    // The authorization request leads (through PUBLIC_URL's addresses) to the sign-in page.
    let url = authorize.href
    for (let hop = 0; hop < 5 && !url.endsWith(`/t/${t.slug}/sign-in`); hop++) {
      const res = await browser.once('GET', url.replace(publicUrl, server.url))
      url = new URL(res.headers.get('location') ?? '', url.replace(publicUrl, server.url)).href
    }
    const signInPage = await browser.get(url.replace(publicUrl, server.url))
    assert.match(signInPage.url, new RegExp(`/t/${t.slug}/sign-in$`))
    const done = await browser.post(`/t/${t.slug}/sign-in`, {
      email: user.email,
      password: user.password,
    })
    assert.equal(done.status, 200)
    assert.match(done.html, new RegExp(`href="/t/${t.slug}/authorize/`), 'back to the request')
    const [row, ...others] = (await logins(t)).filter((e) => e.userId === user.user.id)
    assert.equal(others.length, 0)
    assert.equal(row.metadata.clientId, app.clientId)
    assert.equal(row.metadata.via, 'password')

    // The same browser, already signed in, authorizes again: no new sign-in, no new row.
    const tokens = await grantThroughPages(server, t.slug, browser, app)
    assert.ok(tokens.id_token)
    assert.equal((await logins(t)).filter((e) => e.userId === user.user.id).length, 1)
  })

  test('a plain sign-in on the hosted pages has none', async () => {
    const { t } = await withApplication()
    const user = await signup(server, t.slug)
    const browser = new PageClient(server, randomIp())
    await browser.get(`/t/${t.slug}/sign-in`)
    const page = await browser.post(`/t/${t.slug}/sign-in`, {
      email: user.email,
      password: user.password,
    })
    assert.match(page.url, /\/account$/)
    const [row] = (await logins(t)).filter((e) => e.userId === user.user.id)
    assert.equal(row.metadata.via, 'password')
    assert.equal('clientId' in row.metadata, false)
  })

  test('the headers sent from outside the process name no application', async () => {
    const { t, app } = await withApplication()
    const user = await signup(server, t.slug)
    const forged: Record<string, string>[] = [
      { 'x-served-client': app.clientId },
      { 'x-served-client': app.clientId, 'x-hosted-pages-key': 'guessed' },
      { 'x-served-client': app.clientId, 'x-hosted-pages-key': 'A'.repeat(43) },
    ]
    for (const headers of forged) {
      const res = await server.request(
        'POST',
        `/v1/${t.slug}/auth/login`,
        { email: user.email, password: user.password },
        { headers },
      )
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
    const rows = (await logins(t)).filter((e) => e.userId === user.user.id)
    assert.equal(rows.length, 3)
    for (const row of rows) assert.equal('clientId' in row.metadata, false)
  })
})
