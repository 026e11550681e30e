// "Connected apps" on the account page (CONTRACT §11, Consent): the applications the user
// granted, what each may do in words, and Revoke (a CSRF-checked form, DELETE
// me/applications/{clientId} through the API). Over HTTP with a browser without
// JavaScript, then in Chromium (axe-core, screenshots at both widths, the button by role).
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import * as client from 'openid-client'
import type { Browser } from 'playwright-core'
import { auditRows, unchanged } from '../db.ts'
import {
  checkAccessibility,
  launchChromium,
  RESULT_SHOTS,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import {
  createApiResource,
  createApplication,
  grantThroughPages,
  oauthError,
  oidcClient,
} from '../fixtures/oidc.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'
import { PageClient, textOf } from './page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

let server: TestServer

before(async (ctx) => {
  server = await startTestServer(ctx)
})

/**
 * A tenant with a third-party application and an API, and a user who allowed the app
 * (OpenID scopes and the API's scope) from `browser`, signed in on the hosted pages.
 */
async function connected() {
  const t = await createTenant(server)
  const api = await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Notes API',
    identifier: 'https://notes.example.com',
    scopes: [{ name: 'notes:read', description: 'Read your notes' }],
  })
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Gadget Planner',
    type: 'web',
    redirectUris: [REDIRECT],
    firstParty: false,
  })
  const app = {
    clientId: made.application.clientId,
    clientSecret: String(made.clientSecret),
    redirectUri: REDIRECT,
  }
  const user = await signup(server, t.slug)
  const browser = await signedIn(t, user.email, user.password)
  const tokens = await grantThroughPages(server, t.slug, browser, app, {
    prompt: 'consent',
    scope: 'openid email offline_access notes:read',
    resource: api.identifier,
  })
  return { t, app, user, browser, tokens }
}

async function signedIn(t: TenantFixture, email: string, password: string) {
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  const page = await browser.post(`/t/${t.slug}/sign-in`, { email, password })
  assert.match(page.url, /\/account$/)
  return browser
}

const revokePath = (t: TenantFixture, clientId: string) =>
  `/t/${t.slug}/account/applications/${clientId}/revoke`

describe('the account page, connected apps', () => {
  test('lists the app with what it may do in words and a Revoke form; Revoke ends its access', async () => {
    const { t, app, user, browser, tokens } = await connected()
    let page = await browser.get(`/t/${t.slug}/account`)
    const text = textOf(page.html)
    assert.match(
      text,
      /Connected apps .*Gadget Planner Connected [A-Z][a-z]{2} \d{1,2}, \d{4}\. It can: Know who you are in this workspace See your email address Stay connected when you are not using it Read your notes \(Notes API\)/,
    )
    assert.ok(page.html.includes(`action="${revokePath(t, app.clientId)}"`), 'a Revoke form')
    assert.match(page.html, /aria-label="Revoke Gadget Planner">Revoke</)

    page = await browser.post(revokePath(t, app.clientId), {})
    assert.equal(page.status, 200)
    assert.match(page.url, /\/account\?done=app-revoked/)
    assert.match(textOf(page.html), /The app can no longer use your account/)
    assert.match(textOf(page.html), /No apps use your account/)
    const [event] = await auditRows(server, t.tenantId, 'ApplicationConsentRevoked')
    assert.equal(event.userId, user.user.id)
    assert.equal((event.metadata as { clientId: string }).clientId, app.clientId)
    const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
    const refused = await oauthError(client.refreshTokenGrant(config, String(tokens.refresh_token)))
    assert.equal(refused.error, 'invalid_grant')
  })

  test('a Revoke without the form’s CSRF field, or from another user’s browser, changes nothing', async () => {
    const { t, app, browser } = await connected()
    await browser.get(`/t/${t.slug}/account`)
    const other = await signup(server, t.slug)
    const stranger = await signedIn(t, other.email, other.password)
    await stranger.get(`/t/${t.slug}/account`)
    await unchanged(server, t.tenantId, async () => {
      const forged = await browser.post(revokePath(t, app.clientId), { _csrf: 'forged' })
      assert.equal(forged.status, 403)
      const missing = await browser.send('POST', revokePath(t, app.clientId), '')
      assert.equal(missing.status, 403)
      // The stranger's own, valid field: the API finds no grant of theirs.
      const theirs = await stranger.post(revokePath(t, app.clientId), {})
      assert.match(theirs.url, /\/account$/)
      assert.match(textOf(theirs.html), /No apps use your account/)
    })
    assert.match(textOf((await browser.get(`/t/${t.slug}/account`)).html), /Gadget Planner/)
  })
})

describe('in Chromium', { skip }, () => {
  let chromium: Browser
  before(async () => {
    chromium = await launchChromium()
    mkdirSync(RESULT_SHOTS, { recursive: true })
  })
  after(() => chromium?.close())

  test('the connected app is shown accessibly at both widths; its Revoke button revokes it', async () => {
    const { t, user } = await connected()
    const context = await chromium.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${server.url}/t/${t.slug}/sign-in`)
      await page.getByLabel('Email').fill(user.email)
      await page.getByLabel('Password').fill(user.password)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL((url) => url.pathname === `/t/${t.slug}/account`)
      await page.getByRole('heading', { name: 'Connected apps' }).waitFor()
      await checkAccessibility(page, 'connected apps')
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 })
        await page.locator('#apps-h').scrollIntoViewIfNeeded()
        await page.screenshot({
          path: join(RESULT_SHOTS, `connected-apps-${width}.png`),
          fullPage: true,
        })
      }
      await page.getByRole('button', { name: 'Revoke Gadget Planner' }).click()
      await page.getByText('The app can no longer use your account').waitFor()
      assert.equal(await page.getByRole('button', { name: 'Revoke Gadget Planner' }).count(), 0)
    } finally {
      await context.close()
    }
  })
})
