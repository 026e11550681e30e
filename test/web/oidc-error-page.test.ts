// oidc-provider's error page (renderError; web/pages/oidc-error.ts): a request the provider
// refuses without going back to the application is answered in the hosted pages' look (the
// tenant's name, escaped, the pages' stylesheet and security headers), with the provider's
// status and never a redirect. Then in Chromium at both widths.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import {
  inFreshBrowser,
  launchChromium,
  RESULT_SHOTS,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { createApplication } from '../fixtures/oidc.ts'
import { createTenant, startTestServer, type TenantFixture, type TestServer } from '../helpers.ts'
import { textOf } from './page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

let server: TestServer
let t: TenantFixture
let clientId: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server, { name: 'Acme <Widgets>' })
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Gadget Planner',
    type: 'web',
    redirectUris: [REDIRECT],
  })
  clientId = made.application.clientId
})

const authorize = (params: Record<string, string>) =>
  `/oidc/${t.slug}/auth?${new URLSearchParams({ response_type: 'code', scope: 'openid', ...params })}`

async function htmlGet(path: string) {
  const res = await fetch(server.url + path, {
    redirect: 'manual',
    headers: { accept: 'text/html' },
  })
  return { res, body: await res.text() }
}

describe("the provider's error page", () => {
  test('an unknown client or an unregistered redirect URI: the hosted look, the status kept, no redirect', async () => {
    for (const params of [
      { client_id: 'no-such-client', redirect_uri: REDIRECT },
      { client_id: clientId, redirect_uri: 'https://evil.example/callback' },
    ]) {
      const { res, body } = await htmlGet(authorize(params))
      assert.equal(res.status, 400, JSON.stringify(params))
      assert.equal(res.headers.get('location'), null)
      assert.match(String(res.headers.get('content-type')), /^text\/html/)
      assert.match(String(res.headers.get('content-security-policy')), /default-src/)
      // An answer of the authorization endpoint: a popup keeps its opener (web/http.ts).
      assert.equal(res.headers.get('cross-origin-opener-policy'), 'unsafe-none')
      assert.match(body, /<link rel="stylesheet" href="\/assets\/pages.css">/)
      assert.ok(!body.includes('<script'), 'an error page holds no script')
      assert.match(body, /<span class="tenant-name">Acme &lt;Widgets&gt;<\/span>/)
      assert.match(body, /<title>Sign-in error · Acme &lt;Widgets&gt;<\/title>/)
      const text = textOf(body)
      assert.match(text, /This sign-in could not continue/)
      assert.match(text, /Error code: invalid_(client|redirect_uri)/)
      assert.match(text, /client is invalid|redirect_uri did not match/)
    }
  })
})

describe('in Chromium', { skip }, () => {
  let chromium: Browser
  before(async () => {
    chromium = await launchChromium()
  })
  after(() => chromium?.close())

  test('shown at both widths', async () => {
    await inFreshBrowser(chromium, async (page) => {
      const response = await page.goto(
        server.url + authorize({ client_id: clientId, redirect_uri: 'https://evil.example/cb' }),
      )
      assert.equal(response?.status(), 400)
      await page.getByRole('heading', { name: 'This sign-in could not continue' }).waitFor()
      await screenshots(page, 'oidc-error', RESULT_SHOTS)
    })
  })
})
