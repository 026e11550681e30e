// The device authorization grant (RFC 8628; CONTRACT §11, Flows) with two real parties:
// openid-client (v6) as a native application on a device with no browser, Debian's Chromium
// as the person who types the device's code on the hosted pages. The full flow (code, confirm,
// hosted sign-in, tokens); a wrong code (the error shown, nothing granted); Cancel
// (access_denied); a code past its lifetime (expired_token); and a web application, which may
// not use the grant (unauthorized_client).
//
// The tests' PUBLIC_URL is http://auth.test: Chromium resolves that host to the test server.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { and, eq, sql } from '../../src/db/orm.ts'
import { oidcModels } from '../../src/db/schema.ts'
import {
  checkAccessibility,
  inFreshBrowser,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { createApplication, issuerOf, oauthError, oidcClient } from '../fixtures/oidc.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'

let server: TestServer
let browser: Browser
let t: TenantFixture
let user: { email: string; password: string; userId: string }
let tv: { clientId: string }
let webApp: { clientId: string; clientSecret: string }

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  t = await createTenant(server)
  const made = await signup(server, t.slug)
  user = { email: made.email, password: made.password, userId: made.user.id }
  const native = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Living Room TV',
    type: 'native',
    redirectUris: ['com.example.tv:/callback'],
  })
  tv = { clientId: native.application.clientId }
  const web = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Team Notes',
    type: 'web',
    redirectUris: ['https://notes.example.com/callback'],
  })
  webApp = { clientId: web.application.clientId, clientSecret: String(web.clientSecret) }
  browser = await launchChromium(new URL(server.url).port)
})

after(async () => {
  if (skip) return
  await browser?.close()
})

/** The device starts: openid-client asks the device authorization endpoint for codes. */
async function startOnDevice(scope = 'openid email offline_access') {
  const config = await oidcClient(server, t.slug, tv.clientId)
  const response = await client.initiateDeviceAuthorization(config, { scope })
  return { config, response }
}

/** One poll of the token endpoint, as the device makes it (no waiting). */
function pollOnce(config: client.Configuration, deviceCode: string) {
  return client.genericGrantRequest(config, DEVICE_CODE, { device_code: deviceCode })
}

/** The device code's row, as the provider stored it. */
async function deviceCodeRow(deviceCode: string) {
  const rows = await server.deps.db
    .select({ payload: oidcModels.payload })
    .from(oidcModels)
    .where(
      and(
        eq(oidcModels.tenantId, t.tenantId),
        eq(oidcModels.model, 'DeviceCode'),
        eq(oidcModels.id, deviceCode),
      ),
    )
  assert.equal(rows.length, 1, 'the device code is stored')
  return rows[0].payload
}

/** The person opens the verification URI the device shows and types the code. */
async function enterCode(page: Page, verificationUri: string, code: string) {
  const response = await page.goto(
    verificationUri.replace(server.url, server.deps.config.publicUrl),
  )
  assert.equal(response?.status(), 200)
  await page.getByLabel('Code').fill(code)
  await page.getByRole('button', { name: 'Continue' }).click()
}

test('device flow: the code typed on the hosted page, confirmed, the hosted sign-in, and openid-client polling gets an ID token for the user', {
  skip,
}, async () => {
  const { config, response } = await startOnDevice()
  // The device reached the test server's address; the person uses the public one.
  const verificationUri = response.verification_uri.replace(
    server.url,
    server.deps.config.publicUrl,
  )
  assert.equal(verificationUri, `${issuerOf(server, t.slug)}/device`)
  assert.match(response.user_code, /^[A-Z]{4}-[A-Z]{4}$/)
  // The device polls from the start, as a real one does; the first answers are pending.
  const polling = client.pollDeviceAuthorizationGrant(config, { ...response, interval: 1 })
  await inFreshBrowser(browser, async (page) => {
    await page.goto(verificationUri)
    await checkAccessibility(page, 'device code entry')
    // The hosted pages' shell: the tenant's name heads the page.
    assert.match(
      String(await page.locator('header.brand .tenant-name').textContent()),
      new RegExp(t.slug),
    )
    await screenshots(page, 'w4-device-code')
    await page.getByLabel('Code').fill(response.user_code.toLowerCase())
    await page.getByRole('button', { name: 'Continue' }).click()

    await page.getByRole('heading', { name: 'Sign in to Living Room TV on your device?' }).waitFor()
    assert.equal(await page.locator('.user-code code').textContent(), response.user_code)
    await checkAccessibility(page, 'device confirmation')
    await screenshots(page, 'w4-device-confirm')
    await page.getByRole('button', { name: 'Continue' }).click()

    // Not signed in on the hosted pages: the sign-in page, then back to the device flow.
    await page.waitForURL((url) => url.pathname === `/t/${t.slug}/sign-in`)
    await page.getByLabel('Email').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('heading', { name: 'Your device is signed in' }).waitFor()
    await checkAccessibility(page, 'device success')
    await screenshots(page, 'w4-device-success')
  })
  const tokens = await polling
  const claims = tokens.claims()
  assert.ok(claims, 'an ID token')
  assert.equal(claims.iss, issuerOf(server, t.slug))
  assert.equal(claims.aud, tv.clientId)
  assert.equal(claims.sub, user.userId)
  assert.ok(tokens.refresh_token, 'offline_access granted to the first-party app')
  const info = await client.fetchUserInfo(config, tokens.access_token, user.userId)
  assert.equal(info.email, user.email)
  // The code is spent: a second poll gets nothing more.
  const again = await oauthError(pollOnce(config, response.device_code))
  assert.equal(again.error, 'invalid_grant')
})

test('device flow: a wrong code shows the error on the page and grants nothing (the device keeps waiting)', {
  skip,
}, async () => {
  const { config, response } = await startOnDevice()
  await inFreshBrowser(browser, async (page) => {
    const wrong = response.user_code === 'BCDF-GHJK' ? 'BCDF-GHJL' : 'BCDF-GHJK'
    await enterCode(page, response.verification_uri, wrong)
    const alert = page.getByRole('alert')
    await alert.waitFor()
    assert.match(String(await alert.textContent()), /That code is not right/)
    assert.equal(await page.getByLabel('Code').getAttribute('aria-invalid'), 'true')
    await checkAccessibility(page, 'device wrong code')
    await screenshots(page, 'w4-device-wrong-code')
    // An empty code: asked for, nothing else happens.
    await page.getByLabel('Code').fill('')
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByText('Enter the code your device shows.').first().waitFor()
  })
  const row = await deviceCodeRow(response.device_code)
  assert.equal(row.accountId, undefined)
  assert.equal(row.error, undefined)
  const polled = await oauthError(pollOnce(config, response.device_code))
  assert.equal(polled.error, 'authorization_pending')
})

test('device flow: Cancel on the confirmation page answers the device access_denied', {
  skip,
}, async () => {
  const { config, response } = await startOnDevice()
  await inFreshBrowser(browser, async (page) => {
    await enterCode(page, response.verification_uri, response.user_code)
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.getByRole('status').waitFor()
    assert.match(String(await page.getByRole('status').textContent()), /not signed in/)
    // The same code cannot be used after it was refused.
    await page.getByLabel('Code').fill(response.user_code)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByText('That code was already used').first().waitFor()
  })
  const denied = await oauthError(pollOnce(config, response.device_code))
  assert.equal(denied.error, 'access_denied')
  const row = await deviceCodeRow(response.device_code)
  assert.equal(row.accountId, undefined)
})

test('device flow: a code past its lifetime answers the device expired_token, and the page says it expired', {
  skip,
}, async () => {
  const { config, response } = await startOnDevice()
  assert.equal(response.expires_in, 600)
  // Ten minutes and a second pass: the code's own expiry and its row's, as the clock would move them.
  await server.deps.db
    .update(oidcModels)
    .set({
      payload: sql`jsonb_set(${oidcModels.payload}, '{exp}', to_jsonb((${oidcModels.payload}->>'exp')::bigint - 601))`,
      expiresAt: sql`${oidcModels.expiresAt} - interval '601 seconds'`,
    })
    .where(
      and(
        eq(oidcModels.tenantId, t.tenantId),
        eq(oidcModels.model, 'DeviceCode'),
        eq(oidcModels.id, response.device_code),
      ),
    )
  const expired = await oauthError(pollOnce(config, response.device_code))
  assert.equal(expired.error, 'expired_token')
  await inFreshBrowser(browser, async (page) => {
    await enterCode(page, response.verification_uri, response.user_code)
    await page.getByText('That code has expired').first().waitFor()
  })
  const row = await deviceCodeRow(response.device_code)
  assert.equal(row.accountId, undefined)
})

test('device flow: verification_uri_complete (the code in the link, e.g. a QR code) opens the confirmation page directly', {
  skip,
}, async () => {
  const { config, response } = await startOnDevice()
  assert.ok(response.verification_uri_complete)
  await inFreshBrowser(browser, async (page) => {
    await page.goto(
      response.verification_uri_complete?.replace(server.url, server.deps.config.publicUrl) ?? '',
    )
    await page.getByRole('heading', { name: 'Sign in to Living Room TV on your device?' }).waitFor()
    assert.equal(await page.locator('.user-code code').textContent(), response.user_code)
  })
  const polled = await oauthError(pollOnce(config, response.device_code))
  assert.equal(polled.error, 'authorization_pending')
})

test("device flow: only native applications may use it (a web application is refused with invalid_request, oidc-provider's answer)", {
  skip,
}, async () => {
  const config = await oidcClient(server, t.slug, webApp.clientId, webApp.clientSecret)
  const refused = await oauthError(client.initiateDeviceAuthorization(config, { scope: 'openid' }))
  assert.equal(refused.error, 'invalid_request')
})
